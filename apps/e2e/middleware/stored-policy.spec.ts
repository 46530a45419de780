/*
 * The bot policy stored in the API reaches a running site: a real site server per framework,
 * gated against the real API, with a short refresh interval. A change made through the API (as
 * the dashboard and the CLI make it) applies on the next refresh, with no restart; the policy in
 * code still wins for the keys it sets.
 */

import { createSite, type TestSite } from '../../../apps/api/test/fixtures';
import { AHREFSBOT, BROWSER, CLAUDEBOT, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { FRAMEWORKS, type SiteServer } from './support/site-servers';

let site: GatedSite;
beforeAll(async () => {
  site = await startGatedSite();
}, 60_000);
afterAll(() => site?.close());

const REFRESH_MS = 100;

describe.each(FRAMEWORKS)('$name: the stored policy', (framework) => {
  let server: SiteServer;
  // A site of its own: the servers of the frameworks before keep refreshing theirs (adapters leave
  // the gate running), and one site token's requests share a rate limit.
  let own: TestSite;
  let siteLoads = 0;
  const countingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (new URL(String(input)).pathname === '/v1/site' && response.ok) siteLoads++;
    return response;
  };
  beforeAll(async () => {
    own = await createSite(site.app, site.publisher);
    const pricing = await site.app.call('PUT', `/v1/sites/${own.siteId}/pricing`, {
      headers: site.publisher.auth,
      body: { default_price_usd: '0.01' },
    });
    expect(pricing.status).toBe(200);
    // The code blocks SEO crawlers; the stored policy decides the rest.
    const options = site.options({
      siteId: own.siteId,
      siteToken: own.siteToken,
      secret: own.secret,
      refreshMs: REFRESH_MS,
      fetch: countingFetch,
      policy: { categories: { seo: 'block' } },
    });
    server = await framework.start(options);
  });
  afterAll(() => server?.close());

  async function status(userAgent: string): Promise<number> {
    const response = await fetch(`${server.url}/articles/policy`, { headers: { 'user-agent': userAgent } });
    await response.arrayBuffer();
    return response.status;
  }

  async function policy(method: 'PUT' | 'DELETE', path: string, body?: unknown) {
    const response = await site.app.call(method, `/v1/sites/${own.siteId}/bot-policy${path}`, {
      headers: site.publisher.auth,
      body,
    });
    expect(response.status).toBe(200);
    return response.body;
  }

  /**
   * Until three more loads of the site's terms have been answered: the second was asked for after
   * the first's answer (so after the change), and applied before the third was asked for.
   */
  async function refreshed(): Promise<void> {
    const target = siteLoads + 3;
    for (let i = 0; i < 600 && siteLoads < target; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(siteLoads).toBeGreaterThanOrEqual(target);
  }

  it('blocks a crawler set to block through the API with no restart, and charges it again once set back', async () => {
    expect(await status(GPTBOT)).toBe(402);

    expect((await policy('PUT', '/bots/GPTBot', { action: 'block' })).bots).toEqual({ GPTBot: 'block' });
    await refreshed();
    expect(await status(GPTBOT)).toBe(403);
    expect(await status(CLAUDEBOT)).toBe(402);
    expect(await status(BROWSER)).toBe(200);

    await policy('PUT', '/bots/GPTBot', { action: 'charge' });
    await refreshed();
    expect(await status(GPTBOT)).toBe(402);

    await policy('PUT', '/bots/GPTBot', { action: 'allow' });
    await refreshed();
    expect(await status(GPTBOT)).toBe(200);

    // Removing the crawler's own action: its category's default (charge) applies again.
    await policy('DELETE', '/bots/GPTBot');
    await refreshed();
    expect(await status(GPTBOT)).toBe(402);
  });

  it('answers a crawler blocked since it paid 403, its token still live: the block applies at the refresh, not when its tokens expire', async () => {
    const page = `${server.url}/articles/paid-then-blocked`;
    const asked = await fetch(page, { headers: { 'user-agent': GPTBOT } });
    expect(asked.status).toBe(402);
    const token = await site.payThroughApi(await asked.json());
    const read = (userAgent: string) =>
      fetch(page, { headers: { 'user-agent': userAgent, 'x-crawlgate-token': token } }).then(async (answer) => {
        await answer.arrayBuffer();
        return answer.status;
      });
    expect(await read(GPTBOT)).toBe(200);

    await policy('PUT', '/bots/GPTBot', { action: 'block' });
    await refreshed();
    expect(await read(GPTBOT)).toBe(403);
    // The token itself still opens the page to a visitor the policy does not block.
    expect(await read(CLAUDEBOT)).toBe(200);

    await policy('DELETE', '/bots/GPTBot');
    await refreshed();
    expect(await read(GPTBOT)).toBe(200);
  });

  it('applies stored categories, while a category the code sets stays the code’s', async () => {
    await policy('PUT', '', { categories: { 'ai-training': 'block', seo: 'allow' } });
    await refreshed();
    expect(await status(CLAUDEBOT)).toBe(403);
    expect(await status(GPTBOT)).toBe(403);
    expect(await status(AHREFSBOT)).toBe(403); // the code's seo: 'block' wins over the stored 'allow'

    await policy('PUT', '', {});
    await refreshed();
    expect([await status(CLAUDEBOT), await status(GPTBOT), await status(AHREFSBOT)]).toEqual([402, 402, 403]);
  });
});
