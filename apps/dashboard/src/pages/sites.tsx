import { useState } from 'preact/hooks';
import type { CreatedSite, Site } from '@crawlgate/publisher';
import { useSession } from '../api-context';
import { FieldError, FormErrors } from '../components/form-errors';
import { OnceOnly, type OnceOnlyValue } from '../components/once-only';
import { routeHref } from '../routes';
import { useDialogFocus } from '../use-dialog-focus';
import { useFormSubmit } from '../use-form-submit';

type Confirming = { kind: 'delete' | 'rotate-token' | 'rotate-secret'; site: Site } | null;

export function SitesPage({ sites, onChanged }: { sites: Site[]; onChanged(): void }) {
  const { client } = useSession();
  const [reveal, setReveal] = useState<{ title: string; values: OnceOnlyValue[] } | null>(null);
  const [confirming, setConfirming] = useState<Confirming>(null);
  const action = useFormSubmit();

  const confirm = (kind: NonNullable<Confirming>['kind'], site: Site, revokeAtOnce: boolean) =>
    action.run(async () => {
      setConfirming(null);
      if (kind === 'delete') {
        await client.deleteSite(site.site_id);
      } else if (kind === 'rotate-token') {
        const rotated = await client.rotateSiteToken(site.site_id);
        setReveal({
          title: `New site token for ${site.domain}`,
          values: [
            {
              label: 'Site token',
              value: rotated.site_token,
              hint: 'The previous token stopped working: update your middleware now.',
            },
          ],
        });
      } else {
        // No grace asked for: the service's default grace period applies.
        const rotated = await client.rotateSecret(site.site_id, revokeAtOnce ? { graceSeconds: 0 } : {});
        const until = rotated.previous_valid_until
          ? `Tokens signed with the previous secret verify until ${new Date(rotated.previous_valid_until).toUTCString()}.`
          : 'The previous secret stopped verifying at once: your middleware refuses the tokens it signed once it next refreshes (within 30 seconds).';
        setReveal({
          title: `New access-token secret for ${site.domain}`,
          values: [
            { label: 'Access-token secret', value: rotated.access_token_secret, hint: until },
            { label: 'Key id (kid)', value: rotated.kid },
          ],
        });
      }
      onChanged();
    });

  return (
    <section>
      <h2>Sites</h2>
      {reveal && (
        <OnceOnly
          key={reveal.values[0].value}
          title={reveal.title}
          values={reveal.values}
          onDone={() => setReveal(null)}
        />
      )}
      <CreateSiteForm
        onCreated={(site) => {
          setReveal({
            title: `${site.domain} is registered`,
            values: [
              { label: 'Site token', value: site.site_token, hint: 'Your middleware sends it as X-Site-Token.' },
              {
                label: 'Access-token secret',
                value: site.access_token_secret,
                hint: 'Lets your middleware verify access tokens locally.',
              },
              { label: 'Key id (kid)', value: site.kid },
            ],
          });
          onChanged();
        }}
      />
      <FormErrors form={action} />
      {confirming && (
        <ConfirmPanel
          key={`${confirming.kind}:${confirming.site.site_id}`}
          confirming={confirming}
          onCancel={() => setConfirming(null)}
          onConfirm={(revokeAtOnce) => void confirm(confirming.kind, confirming.site, revokeAtOnce)}
        />
      )}
      <table aria-label="Sites">
        <thead>
          <tr>
            <th>Domain</th>
            <th>Name</th>
            <th class="num">Default price</th>
            <th class="num">Rules</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {sites.length === 0 && (
            <tr>
              <td colSpan={5} class="muted">
                No sites yet.
              </td>
            </tr>
          )}
          {sites.map((site) => (
            <tr key={site.site_id} data-site={site.domain}>
              <td>{site.domain}</td>
              <td>{site.name ?? <span class="muted">–</span>}</td>
              <td class="num">${site.default_price_usd}</td>
              <td class="num">{site.rules_count}</td>
              <td class="actions">
                <a class="button small" href={routeHref({ page: 'pricing', siteId: site.site_id })}>
                  Pricing
                </a>
                <a class="button small" href={routeHref({ page: 'payments', siteId: site.site_id })}>
                  Payments
                </a>
                <a class="button small" href={routeHref({ page: 'crawlers', siteId: site.site_id })}>
                  Crawlers
                </a>
                <button
                  type="button"
                  class="small"
                  disabled={action.busy}
                  onClick={() => setConfirming({ kind: 'rotate-token', site })}
                >
                  Rotate token
                </button>
                <button
                  type="button"
                  class="small"
                  disabled={action.busy}
                  onClick={() => setConfirming({ kind: 'rotate-secret', site })}
                >
                  Rotate secret
                </button>
                <button
                  type="button"
                  class="small danger"
                  disabled={action.busy}
                  onClick={() => setConfirming({ kind: 'delete', site })}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function CreateSiteForm({ onCreated }: { onCreated(site: CreatedSite): void }) {
  const { client } = useSession();
  const [domain, setDomain] = useState('');
  const [name, setName] = useState('');
  const form = useFormSubmit();

  const submit = (event: Event) => {
    event.preventDefault();
    return form.run(async () => {
      const site = await client.createSite({ domain, ...(name.trim() ? { name: name.trim() } : {}) });
      setDomain('');
      setName('');
      onCreated(site);
    });
  };

  return (
    <form class="panel" onSubmit={(event) => void submit(event)} aria-label="Add a site">
      <h3>Add a site</h3>
      <div class="row">
        <label>
          Domain
          <input
            name="domain"
            value={domain}
            onInput={(e) => setDomain((e.target as HTMLInputElement).value)}
            placeholder="news.example.com"
            required
            aria-invalid={Boolean(form.fields.byField.domain)}
          />
          <FieldError form={form} field="domain" />
        </label>
        <label>
          Name (optional)
          <input
            name="name"
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
            placeholder="Example News"
            aria-invalid={Boolean(form.fields.byField.name)}
          />
          <FieldError form={form} field="name" />
        </label>
        <button type="submit" disabled={form.busy}>
          Add site
        </button>
      </div>
      <FormErrors form={form} />
    </form>
  );
}

const CONFIRM_TEXT = {
  delete:
    'Deleting stops its gates at once: the middleware gets 401s, and agents can no longer pay for it. Past payments stay in your reports. This cannot be undone.',
  'rotate-token': 'The current site token stops working at once: your middleware must be given the new one.',
  'rotate-secret':
    'A new secret signs new access tokens. Give it to your middleware; it also learns within 30 seconds which secrets still verify.',
};

/** Every destructive action asks first; deleting also asks for the domain to be typed. */
function ConfirmPanel({
  confirming,
  onCancel,
  onConfirm,
}: {
  confirming: NonNullable<Confirming>;
  onCancel(): void;
  /** revokeAtOnce: for a secret rotation, the current secret stops verifying now instead of after the grace period. */
  onConfirm(revokeAtOnce: boolean): void;
}) {
  const [typed, setTyped] = useState('');
  const [revokeAtOnce, setRevokeAtOnce] = useState(false);
  const box = useDialogFocus<HTMLDivElement>(onCancel);
  const needsTyping = confirming.kind === 'delete';
  const verb = {
    delete: 'Delete',
    'rotate-token': 'Rotate site token of',
    'rotate-secret': 'Rotate access-token secret of',
  }[confirming.kind];
  return (
    <div class="panel confirm" role="dialog" aria-label="Confirm" ref={box}>
      <h3>
        {verb} {confirming.site.domain}?
      </h3>
      <p>{CONFIRM_TEXT[confirming.kind]}</p>
      {confirming.kind === 'rotate-secret' && (
        <fieldset>
          <legend>The current secret</legend>
          <label>
            <input
              type="radio"
              name="previous-secret"
              checked={!revokeAtOnce}
              onChange={() => setRevokeAtOnce(false)}
            />{' '}
            Keeps verifying the tokens it signed for the grace period (a routine rotation); a secret still in its grace
            period from an earlier rotation stops now
          </label>
          <label>
            <input type="radio" name="previous-secret" checked={revokeAtOnce} onChange={() => setRevokeAtOnce(true)} />{' '}
            Revoke it at once (it leaked): tokens it signed stop opening pages, paid ones included, once your middleware
            next refreshes (within 30 seconds)
          </label>
        </fieldset>
      )}
      {needsTyping && (
        <label>
          Type <code>{confirming.site.domain}</code> to confirm
          <input
            name="confirm-domain"
            value={typed}
            onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
            autoComplete="off"
          />
        </label>
      )}
      <div class="row">
        {/* Cancel first: it is what focus lands on, so a stray Enter changes nothing. */}
        <button type="button" class="secondary" onClick={onCancel} data-autofocus={needsTyping ? undefined : true}>
          Cancel
        </button>
        <button
          type="button"
          class={needsTyping ? 'danger' : ''}
          disabled={needsTyping && typed.trim().toLowerCase() !== confirming.site.domain}
          onClick={() => onConfirm(revokeAtOnce)}
        >
          {verb === 'Delete' ? 'Delete site' : 'Rotate'}
        </button>
      </div>
    </div>
  );
}
