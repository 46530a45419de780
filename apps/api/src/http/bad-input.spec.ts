import fc from 'fast-check';
import { createSite, freshIp, openGate, pricedSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * Random and hostile bodies against every endpoint that reads one: never a 500, every error
 * carries a `detail`, and a rejected pricing change leaves the stored pricing untouched.
 */

const RUNS = 25;

/** Bodies shaped like ours (the right field names) with anything in them, plus any JSON at all. */
function bodies(fields: string[]) {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.string({ maxLength: 5000 }), fc.double(), fc.constant(null));
  return fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.dictionary(fc.constantFrom(...fields), value), fc.array(fc.dictionary(fc.constantFrom(...fields), value)));
}

function deeplyNested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('bad input never breaks the API', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  let gateId: string;
  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ publisher, site } = await pricedSite(app, newWallet().address));
    gateId = (await openGate(app, site, '/fuzz/gate')).id;
  });
  afterAll(() => app.close());

  async function expectHandled(method: string, path: string, body: unknown, headers: Record<string, string>, raw = false) {
    const response = await app.call(method, path, { body, headers, rawBody: raw });
    expect(response.status).toBeLessThan(500);
    if (response.status >= 400) expect(response.body).toHaveProperty('detail');
    return response;
  }

  const endpoints: [string, string, () => string, string[], () => Record<string, string>][] = [
    ['POST', 'register', () => '/v1/publishers/register', ['email', 'password', 'name'], () => ({ 'x-forwarded-for': freshIp() })],
    ['POST', 'login', () => '/v1/publishers/login', ['email', 'password'], () => ({ 'x-forwarded-for': freshIp() })],
    ['PATCH', 'publisher', () => '/v1/publishers/me', ['name', 'payout_address'], () => publisher.auth],
    ['POST', 'site', () => '/v1/sites', ['domain', 'name'], () => publisher.auth],
    ['PATCH', 'site', () => `/v1/sites/${site.siteId}`, ['domain', 'name'], () => publisher.auth],
    ['PUT', 'pricing', () => `/v1/sites/${site.siteId}/pricing`, ['default_price_usd', 'rules', 'path', 'path_pattern', 'price_usd'], () => publisher.auth],
    ['POST', 'gate', () => '/v1/gates', ['url'], () => ({ 'x-site-token': site.siteToken })],
    ['POST', 'verify', () => `/v1/gates/${gateId}/verify`, ['payment', 'tx_hash'], () => ({})],
    ['POST', 'token check', () => '/v1/access-tokens/verify', ['token', 'url'], () => ({ 'x-site-token': site.siteToken })],
    ['POST', 'faucet', () => '/v1/dev/faucet', ['address', 'amount_usd'], () => ({})],
  ];

  describe.each(endpoints)('%s %s', (method, _name, path, fields, headers) => {
    it('answers random bodies with a 2xx or a 4xx that has a detail', async () => {
      await fc.assert(
        fc.asyncProperty(bodies(fields), async (body) => {
          await expectHandled(method, path(), body, headers());
        }),
        { numRuns: RUNS },
      );
    });

    it('answers deep nesting, a huge string and a non-JSON body with a 4xx', async () => {
      for (const raw of [deeplyNested(5000), `{"${fields[0]}": "${'x'.repeat(300_000)}"}`, '{"unterminated": ', '\u0000\u0001']) {
        const response = await expectHandled(method, path(), raw, headers(), true);
        expect(response.status).toBeGreaterThanOrEqual(400);
      }
    });
  });

  it('keeps the stored pricing whole when a change is rejected', async () => {
    const publisherOwn = await registerPublisher(app);
    const own = await createSite(app, publisherOwn);
    const good = { default_price_usd: '0.003', rules: [{ path: '/a/*', price_usd: '0.01' }, { path: '/b', price_usd: '0' }] };
    expect((await app.call('PUT', `/v1/sites/${own.siteId}/pricing`, { body: good, headers: publisherOwn.auth })).status).toBe(200);
    await fc.assert(
      fc.asyncProperty(bodies(['default_price_usd', 'rules', 'path', 'price_usd']), async (body) => {
        const response = await app.call('PUT', `/v1/sites/${own.siteId}/pricing`, { body, headers: publisherOwn.auth });
        const stored = (await app.call('GET', `/v1/sites/${own.siteId}/pricing`, { headers: publisherOwn.auth })).body;
        if (response.status !== 200) expect(stored).toMatchObject({ default_price_usd: '0.003', rules: [{ path: '/a/*', price_usd: '0.01' }, { path: '/b', price_usd: '0' }] });
        else await app.call('PUT', `/v1/sites/${own.siteId}/pricing`, { body: good, headers: publisherOwn.auth });
      }),
      { numRuns: RUNS },
    );
  });
});

describe('header injection', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('never turns a CR/LF in a URL into a response header', async () => {
    const { site } = await pricedSite(app, newWallet().address);
    for (const url of ['/a%0d%0aSet-Cookie:%20stolen=1', '/a\r\nSet-Cookie: stolen=1', 'https://x.example/a%0D%0AX-Injected:%201']) {
      const response = await app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': site.siteToken } });
      expect([402, 422]).toContain(response.status);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(response.headers.get('x-injected')).toBeNull();
      if (response.status === 402) {
        // The v2 header carries the URL base64-encoded: nothing of it can break the header line.
        expect(response.headers.get('payment-required')).toMatch(/^[A-Za-z0-9+/=]+$/);
      }
    }
  });
});
