/*
 * The site's pricing and payment terms (GET /v1/site), loaded at start-up and refreshed in the
 * background, so the gate prices and mints gates with no API call per request. A failed refresh
 * keeps the last terms that loaded (a pricing change waits, money does not) for MAX_TERMS_AGE_MS:
 * past that, a revoked secret, a price raised or a bot blocked since would go unseen, so the terms
 * lapse until a refresh succeeds. Until the first load succeeds there are none, and the gate's
 * failMode decides. The stored bot policy comes with the terms and meets the code's policy there
 * (stored-bot-policy.ts).
 */

import { compileSitePrices, parsePriceUsd, type PriceRule, type SiteOffer, type SitePrices } from '@crawlgate/core';
import type { ApiClient } from './api-client';
import type { BotPolicy } from './bots';

import { refreshBotPolicy, type StoredBotPolicy } from './stored-bot-policy';

export interface SiteTerms {
  offer: SiteOffer;
  prices: SitePrices;
  /** `effective` is the bot policy the gate applies. */
  botPolicy: StoredBotPolicy;
}

/** How long terms a refresh could not replace are used: ten times the longest refresh interval. */
export const MAX_TERMS_AGE_MS = 5 * 60_000;

export interface SiteTermsSource {
  /** The terms last loaded; undefined until the first load succeeds, and while they have lapsed. */
  current(): SiteTerms | undefined;
  /** Whether terms loaded once have lapsed: no refresh has succeeded for MAX_TERMS_AGE_MS. */
  lapsed(): boolean;
  /** The terms last loaded, lapsed or not: what they said is not forgotten, only no longer trusted. */
  lastLoaded(): SiteTerms | undefined;
  /** Resolves once the first load has succeeded or failed (the gate waits for it once, at start-up). */
  ready(): Promise<void>;
  /** Whether ready() has resolved: from then on a request needs not wait. */
  firstLoadEnded(): boolean;
  /**
   * The site the API sent terms for at the last load, when that was not this gate's (the token of
   * another site configured): a mistake in the set-up, not the API out of reach, which failMode is for.
   */
  answeredForSite(): string | undefined;
  close(): void;
}

export interface SiteTermsOptions {
  api: ApiClient;
  /** How often to refresh; at most 30 s, so a pricing change is in effect within 30 s. */
  refreshMs: number;
  /** The policy passed in code, which wins over the stored one key by key. */
  policy?: BotPolicy;
  /** This gate's site: terms the API sends for another (the token of another site configured) are refused. */
  siteId: string;
  onError(message: string): void;
  /**
   * Milliseconds from a clock that never goes back (default performance.now()): the wall clock,
   * stepped back by NTP or by hand, would lengthen the terms' five minutes by as much.
   */
  clock?: () => number;
}

export function loadSiteTerms({
  api,
  refreshMs,
  policy,
  siteId,
  onError,
  clock = () => performance.now(),
}: SiteTermsOptions): SiteTermsSource {
  let terms: SiteTerms | undefined;
  // Read from the clock when the terms are used, not set by a timer: on an edge runtime a timer set
  // while answering a request may never fire, and terms lapsing by one alone would never lapse.
  let loadedAt = 0;
  // When the last load started, and whether one runs: a request that finds no load for two refresh
  // intervals starts one (where timers do not fire, nothing else would, and lapsed terms stay lapsed).
  let triedAt = 0;
  let loading = false;
  // Each load's number: only the newest may store terms, so a load given up for lost (a runtime
  // that dropped it once the answer was sent never settles it) cannot overwrite a later one.
  let loads = 0;
  const lapsed = () => {
    const now = clock();
    // Due, and none running, or the one running started four intervals ago: given up for lost.
    const due = now - triedAt > 2 * refreshMs;
    if (!closed && due && (!loading || now - triedAt > 4 * refreshMs)) void load();
    return terms !== undefined && now - loadedAt > MAX_TERMS_AGE_MS;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let otherSite: string | undefined;

  async function load(): Promise<void> {
    const mine = ++loads;
    loading = true;
    triedAt = clock();
    if (timer) clearTimeout(timer);
    try {
      const offer = await api.site();
      if (mine !== loads) return;
      // The site token is another site's (staging's, pasted here): its prices and policy are not this site's.
      otherSite = offer.site_id.toLowerCase() === siteId.toLowerCase() ? undefined : offer.site_id;
      if (otherSite !== undefined)
        throw new Error(`the API sent the terms of site ${otherSite}, not of ${siteId}: is siteToken another site's?`);
      // The compiled prices depend on the rules alone, which pricing_version tracks; the rest of the offer is taken as is.
      const prices =
        terms?.offer.pricing_version === offer.pricing_version
          ? terms.prices
          : compileSitePrices(rulesOf(offer), micros(offer.default_price_usd));
      terms = { offer, prices, botPolicy: refreshBotPolicy(terms?.botPolicy, offer.bot_policy, policy, onError) };
      loadedAt = clock();
    } catch (error) {
      onError(`${(error as Error).message}; ${terms ? 'keeping the pricing loaded before' : 'no pricing loaded yet'}`);
    } finally {
      if (mine === loads) loading = false;
      if (!closed && mine === loads) {
        // A gate must never keep a process alive on its own.
        timer = unref(setTimeout(() => void load(), refreshMs));
      }
    }
  }

  let firstEnded = false;
  const first = load().then(() => void (firstEnded = true));
  return {
    current: () => (lapsed() ? undefined : terms),
    lapsed,
    lastLoaded: () => terms,
    ready: () => first,
    firstLoadEnded: () => firstEnded,
    answeredForSite: () => otherSite,
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
    },
  };
}

function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

function rulesOf(offer: SiteOffer): PriceRule[] {
  return offer.rules.map((rule) => ({ pattern: rule.path, micros: micros(rule.price_usd) }));
}

function micros(price: string): bigint {
  const parsed = parsePriceUsd(price);
  if (!parsed.ok) throw new Error(`GET /v1/site: unreadable price ${JSON.stringify(price).slice(0, 40)}`);
  return parsed.micros;
}
