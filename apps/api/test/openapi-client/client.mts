/*
 * A publisher's client written against types generated from the running API's OpenAPI document
 * (openapi-typescript), calling it with openapi-fetch. openapi-client.spec.ts copies this file next to the
 * generated `api.ts`, type-checks it with tsc and runs it: it prints what the API answered. (.mts: outside
 * the workspace's own type check, which has no `api.ts`.)
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './api.js';

const [baseUrl, email] = process.argv.slice(2) as [string, string];
const password = 'correct horse battery staple';
const payoutAddress = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

const api = createClient<paths>({ baseUrl });

async function main(): Promise<void> {
  const registered = await api.POST('/v1/publishers/register', { body: { email, password, name: 'Generated client' } });
  if (!registered.data) throw new Error(`register: ${registered.response.status}`);
  const again = await api.POST('/v1/publishers/register', { body: { email, password } });
  const auth = { Authorization: `Bearer ${registered.data.api_key}` };

  const payout = await api.PATCH('/v1/publishers/me', {
    headers: auth,
    params: { header: { 'X-Confirm-Password': password } },
    body: { payout_address: payoutAddress },
  });
  const site = await api.POST('/v1/sites', {
    headers: auth,
    body: { domain: `${registered.data.publisher_id}.example.com` },
  });
  if (!site.data) throw new Error(`create site: ${site.response.status}`);
  const sitePath = { path: { site_id: site.data.site_id } };

  const priced = await api.PUT('/v1/sites/{site_id}/pricing', {
    headers: auth,
    params: sitePath,
    body: {
      default_price_usd: '0.005',
      rules: [
        { path: '/free/*', price_usd: '0' },
        { path: '/premium/*', price_usd: 0.25 },
      ],
    },
  });
  const refused = await api.PUT('/v1/sites/{site_id}/pricing', {
    headers: auth,
    params: sitePath,
    body: { default_price_usd: '+.' },
  });
  const pricing = await api.GET('/v1/sites/{site_id}/pricing', { headers: auth, params: sitePath });
  const me = await api.GET('/v1/publishers/me', { headers: auth });

  const refusal = refused.error?.detail;
  console.log(
    JSON.stringify({
      registered: {
        status: registered.response.status,
        api_key: registered.data.api_key,
        payout_address: registered.data.payout_address,
      },
      again: { status: again.response.status, detail: again.error?.detail },
      payout: { status: payout.response.status, payout_address: payout.data?.payout_address },
      site: {
        status: site.response.status,
        site_id: site.data.site_id,
        domain: site.data.domain,
        rules_count: site.data.rules_count,
      },
      priced: { status: priced.response.status, rules_applied: priced.data?.rules_applied },
      refused: { status: refused.response.status, type: Array.isArray(refusal) ? refusal[0]?.type : refusal },
      pricing: {
        status: pricing.response.status,
        default_price_usd: pricing.data?.default_price_usd,
        rules: pricing.data?.rules,
        version: pricing.data?.version,
      },
      me: { status: me.response.status, payout_address: me.data?.payout_address },
    }),
  );
}

/** Never called: only type-checked, so the generated types must be as strict as the API. */
export async function typesAreStrict(auth: { Authorization: string }, siteId: string): Promise<void> {
  // A payout address can be cleared: nullable fields are settable.
  await api.PATCH('/v1/publishers/me', { headers: auth, body: { payout_address: null, name: null } });
  await api.PUT('/v1/sites/{site_id}/pricing', {
    headers: auth,
    params: { path: { site_id: siteId } },
    // @ts-expect-error a price is a JSON number or a decimal string
    body: { default_price_usd: true },
  });
  await api.PUT('/v1/sites/{site_id}/pricing', {
    headers: auth,
    params: { path: { site_id: siteId } },
    // @ts-expect-error default_price_usd is required
    body: { rules: [] },
  });
  // @ts-expect-error the path needs its site_id
  await api.GET('/v1/sites/{site_id}/pricing', { headers: auth, params: { path: {} } });
  const applied = await api.PUT('/v1/sites/{site_id}/pricing', {
    headers: auth,
    params: { path: { site_id: siteId } },
    body: { default_price_usd: 0.5 },
  });
  // @ts-expect-error counters are numbers
  const count: string | undefined = applied.data?.rules_applied;
  // The 402 gate body is described: what an agent pays.
  const gate = await api.POST('/v1/gates', { headers: { 'X-Site-Token': 'st_…' }, body: { url: '/premium/1' } });
  const offer: components['schemas']['GateOfferView'] | undefined =
    gate.response.status === 402 ? (gate.error as components['schemas']['GateOfferView']) : undefined;
  const payTo: string | undefined = offer?.accepts[0]?.payTo;
  // Errors are typed: `{detail}`, or a 422's list of items.
  const detail: string | components['schemas']['ValidationItem'][] | undefined = applied.error?.detail;
  void [count, payTo, detail];
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
