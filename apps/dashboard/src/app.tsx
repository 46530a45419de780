import { useEffect, useMemo, useState } from 'preact/hooks';
import { PublisherClient, type Site } from '@crawlgate/publisher';
import { SessionContext, useSession, type Session } from './api-context';
import { ErrorNote } from './components/error-note';
import { LoginPage } from './pages/login';
import { CrawlersPage } from './pages/crawlers';
import { OverviewPage } from './pages/overview';
import { PaymentsPage } from './pages/payments';
import { PricingPage } from './pages/pricing';
import { SettingsPage } from './pages/settings';
import { SitesPage } from './pages/sites';
import { forgetApiKey, readApiKey, saveApiKey } from './session';
import { pageHref, PAGES, parseRoute, type Route } from './routes';
import { useLoad } from './use-load';

/** The dashboard is served by the API it talks to. */
const API_URL = location.origin;

const TITLES: Record<Route['page'], string> = {
  overview: 'Overview',
  sites: 'Sites',
  pricing: 'Pricing',
  payments: 'Payments',
  crawlers: 'Crawlers',
  settings: 'Settings',
};

export function App() {
  const [apiKey, setApiKey] = useState(() => readApiKey(sessionStorage));
  const session = useMemo<Session | null>(() => {
    if (!apiKey) return null;
    return {
      // The API is this page's own origin (allowPlainHttp): the page came over that connection already.
      client: new PublisherClient({ apiUrl: API_URL, apiKey, maxRetries: 1, allowPlainHttp: true }),
      // The client already uses a rotated key; the tab keeps it for the next reload.
      replaceApiKey: (next) => saveApiKey(sessionStorage, next),
      signOut: () => {
        forgetApiKey(sessionStorage);
        setApiKey(null);
      },
    };
  }, [apiKey]);

  if (!session) {
    return (
      <LoginPage
        apiUrl={API_URL}
        onSignedIn={(key) => {
          saveApiKey(sessionStorage, key);
          setApiKey(key);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <SignedIn />
    </SessionContext.Provider>
  );
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

function SignedIn() {
  const route = useRoute();
  const session = useSession();
  const sites = useLoad(() => session.client.listSites(), [session.client]);
  const list = sites.data?.items;

  return (
    <div class="layout">
      <header>
        <strong class="brand">Crawlgate</strong>
        <nav>
          {PAGES.map((page) => (
            <a key={page} href={pageHref(page)} aria-current={route.page === page ? 'page' : undefined}>
              {TITLES[page]}
            </a>
          ))}
        </nav>
        <button type="button" class="secondary small" onClick={() => void endSession(session)}>
          Sign out
        </button>
      </header>
      <main>
        {!list ? (
          sites.loading ? (
            <p class="muted">Loading…</p>
          ) : (
            <ErrorNote error={sites.error} />
          )
        ) : (
          <>
            <ErrorNote error={sites.error} />
            <Page route={route} sites={list} onSitesChanged={sites.reload} />
          </>
        )}
      </main>
    </div>
  );
}

function Page({ route, sites, onSitesChanged }: { route: Route; sites: Site[]; onSitesChanged(): void }) {
  switch (route.page) {
    case 'sites':
      return <SitesPage sites={sites} onChanged={onSitesChanged} />;
    case 'pricing':
      return <PricingPage sites={sites} siteId={route.siteId} onChanged={onSitesChanged} />;
    case 'payments':
      return <PaymentsPage sites={sites} siteId={route.siteId} />;
    case 'crawlers':
      return <CrawlersPage sites={sites} siteId={route.siteId} />;
    case 'settings':
      return <SettingsPage />;
    default:
      return <OverviewPage sites={sites} />;
  }
}

/**
 * Sign-out ends the key on the server too (rotated, the new one dropped): a key copied from the
 * tab must not outlive it. Signed out here even when the API cannot be reached.
 */
async function endSession(session: Session): Promise<void> {
  await session.client.rotateApiKey().catch(() => undefined);
  session.signOut();
}
