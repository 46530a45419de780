import { signAccessToken } from '@crawlgate/core';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../../testing/fake-api';
import { crawlgateFetch } from './fetch';

const SECRET = 'a secret of the site';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';

describe('crawlgateFetch', () => {
  const gates: { close(): Promise<void> }[] = [];
  afterAll(() => Promise.all(gates.map((gate) => gate.close())));

  function gateOf() {
    const fake = fakeApi();
    fake.setSite({ default_price_usd: '0', rules: [{ path: '/premium/*', price_usd: '0.5' }] });
    const gate = crawlgateFetch({
      apiUrl: FAKE_API_URL,
      siteId: FAKE_SITE_ID,
      siteToken: 'st_site_token',
      secret: SECRET,
      fetch: fake.fetch,
      logger: { warn: () => undefined },
      crawlerIps: false,
    });
    gates.push(gate);
    return gate;
  }
  const bot = (url: string) => new Request(url, { headers: { 'user-agent': GPTBOT } });

  it('prices the URL the router routes by too, when one is given (a Next.js locale prefix stripped; helper-439)', async () => {
    const gate = gateOf();
    // Written with a locale, the page is free by its own URL; routed, it is /premium/a.
    expect((await gate(bot('https://site.test/fr/premium/a'))).response).toBeUndefined();
    const asked = await gate(bot('https://site.test/fr/premium/a'), undefined, '/premium/a');
    expect(asked.response?.status).toBe(402);
    expect(asked.response?.headers.get('crawler-price')).toBe('USD 0.5');
  });

  it('opens a page with its token when the routed URL is the page’s own (a site without locales)', async () => {
    const gate = gateOf();
    const now = Math.floor(Date.now() / 1000);
    const token = signAccessToken(
      { gate_id: 'gate', site_id: FAKE_SITE_ID, url: '/premium/a', kid: 'k1', iat: now, exp: now + 600 },
      SECRET,
    );
    const request = new Request('https://site.test/premium/a?x=1', {
      headers: { 'user-agent': GPTBOT, authorization: `Bearer ${token}` },
    });
    expect((await gate(request, undefined, '/premium/a?x=1')).response).toBeUndefined();
  });

  it('passes people whatever URL is routed', async () => {
    const gate = gateOf();
    const person = new Request('https://site.test/fr/premium/a', {
      headers: {
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
        accept: 'text/html',
      },
    });
    expect((await gate(person, undefined, '/premium/a')).response).toBeUndefined();
  });
});
