import { decodeBase64Json, encodeBase64Json, signAccessToken } from '@crawlgate/core';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi, paid, type FakeAnswer, type FakeApiOptions } from '../test/support/fake-api';
import { createCrawlgate, type CrawlgateOptions, type CrawlgateRequest } from './crawlgate';
import type { Decision } from './decision';

const SECRET = 'secret-of-the-site';
const SITE_TOKEN = 'st_site_token_never_logged';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

function setup(options: Partial<CrawlgateOptions> = {}, api: FakeApiOptions = {}) {
  const fake = fakeApi(api);
  const warnings: string[] = [];
  const gate = createCrawlgate({
    apiUrl: FAKE_API_URL,
    siteId: FAKE_SITE_ID,
    siteToken: SITE_TOKEN,
    secret: SECRET,
    fetch: fake.fetch,
    logger: { warn: (message) => warnings.push(message) },
    ...options,
  });
  const handle = (url: string, headers: CrawlgateRequest['headers'] = {}, ip = '10.0.0.1') => gate.handle({ method: 'GET', url, headers: { 'user-agent': GPTBOT, ...headers }, ip });
  return { fake, warnings, handle };
}

function token(url: string, { secret = SECRET, siteId = FAKE_SITE_ID, gateId = 'gate-1' } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return signAccessToken({ gate_id: gateId, site_id: siteId, url, kid: 'k1', iat: now, exp: now + 1800 }, secret);
}

/** A well-formed x402 payment (the fake API does not check signatures). */
function payment(version: 1 | 2, nonceDigit = '1') {
  const payload = {
    signature: '0x' + 'ab'.repeat(65),
    authorization: {
      from: '0x' + '3'.repeat(40),
      to: '0x' + '2'.repeat(40),
      value: '10000',
      validAfter: '0',
      validBefore: '9999999999',
      nonce: '0x' + nonceDigit.repeat(64),
    },
  };
  if (version === 1) return encodeBase64Json({ x402Version: 1, scheme: 'exact', network: 'local', payload });
  const accepted = { scheme: 'exact', network: 'eip155:31337', amount: '10000', asset: '0x' + '1'.repeat(40), payTo: '0x' + '2'.repeat(40), maxTimeoutSeconds: 300 };
  return encodeBase64Json({ x402Version: 2, accepted, payload });
}

function respond(decision: Decision) {
  if (decision.kind !== 'respond') throw new Error(`expected a response, got ${decision.kind}`);
  return { ...decision, json: JSON.parse(decision.body) };
}

describe('createCrawlgate', () => {
  it('refuses a configuration without credentials', () => {
    expect(() => createCrawlgate({ apiUrl: FAKE_API_URL, siteId: FAKE_SITE_ID, siteToken: '', secret: SECRET })).toThrow(/siteToken/);
    expect(() => createCrawlgate({ apiUrl: FAKE_API_URL, siteId: FAKE_SITE_ID, siteToken: SITE_TOKEN, secret: [] })).toThrow(/secret/);
  });

  it('lets people and always-free paths through without calling the API', async () => {
    const { fake, handle } = setup();
    expect(await handle('/post/1', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
    expect(await handle('/robots.txt')).toEqual({ kind: 'pass' });
    expect(await handle('/sitemap.xml')).toEqual({ kind: 'pass' });
    expect(fake.calls).toEqual([]);
  });

  it('answers a charged bot 402 with the gate, its PAYMENT-REQUIRED header, the price and no-store', async () => {
    const { handle } = setup();
    const answer = respond(await handle('https://example.com/post/1?ref=feed'));
    expect(answer.status).toBe(402);
    expect(answer.json).toMatchObject({ id: 'gate-1', url: '/post/1?ref=feed', price_usd: '0.01', x402Version: 1 });
    expect(answer.headers).toMatchObject({ 'crawler-price': 'USD 0.01', 'cache-control': 'no-store', 'content-type': 'application/json; charset=utf-8' });
    expect(decodeBase64Json(answer.headers['payment-required'])).toEqual({ x402Version: 2, gate: 1 });
  });

  describe('gate cache', () => {
    it('reuses one gate per path and visitor, and opens another for another visitor', async () => {
      const { fake, handle } = setup();
      expect(respond(await handle('/post/1')).json.id).toBe('gate-1');
      expect(respond(await handle('/post/1?page=2')).json.id).toBe('gate-1');
      expect(respond(await handle('/post/1', {}, '10.0.0.2')).json.id).toBe('gate-2');
      expect(respond(await handle('/post/2')).json.id).toBe('gate-3');
      expect(fake.count('POST /v1/gates')).toBe(3);
    });

    it('shares one API call between concurrent requests', async () => {
      const { fake, handle } = setup();
      const answers = await Promise.all([handle('/post/1'), handle('/post/1'), handle('/post/1')]);
      expect(answers.map((a) => respond(a).json.id)).toEqual(['gate-1', 'gate-1', 'gate-1']);
      expect(fake.count('POST /v1/gates')).toBe(1);
    });

    it('never hands out a gate about to expire, and can be turned off', async () => {
      const expiring = setup({}, { gateTtlMs: 5_000 });
      await expiring.handle('/post/1');
      await expiring.handle('/post/1');
      expect(expiring.fake.count('POST /v1/gates')).toBe(2);

      const uncached = setup({ gateCacheMs: 0 });
      await uncached.handle('/post/1');
      await uncached.handle('/post/1');
      expect(uncached.fake.count('POST /v1/gates')).toBe(2);
    });

    it('forgets the gate once the visitor shows its token (paid straight at verify_url)', async () => {
      const { handle } = setup();
      expect(respond(await handle('/post/1')).json.id).toBe('gate-1');
      expect(await handle('/post/1', { 'x-crawlgate-token': token('/post/1', { gateId: 'gate-1' }) })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/1')).json.id).toBe('gate-2');
    });

    it('remembers free paths too', async () => {
      const { fake, handle } = setup();
      expect(await handle('/free/a')).toEqual({ kind: 'pass' });
      expect(await handle('/free/a')).toEqual({ kind: 'pass' });
      expect(fake.count('POST /v1/gates')).toBe(1);
    });
  });

  describe('access tokens', () => {
    it('lets a token of this path through with no API call, from either header', async () => {
      const { fake, handle } = setup();
      expect(await handle('/post/1?x=1', { authorization: `Bearer ${token('/post/1')}` })).toEqual({ kind: 'pass' });
      expect(await handle('/post/1', { 'x-crawlgate-token': token('/post/1') })).toEqual({ kind: 'pass' });
      expect(fake.calls).toEqual([]);
    });

    it('accepts any secret of a rotation, and nothing signed for another path or site', async () => {
      const { handle } = setup({ secret: ['new-secret', SECRET] });
      expect(await handle('/post/1', { authorization: `Bearer ${token('/post/1')}` })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/1', { authorization: `Bearer ${token('/post/2')}` })).status).toBe(402);
      expect(respond(await handle('/post/1', { authorization: `Bearer ${token('/post/1', { siteId: 'another-site' })}` })).status).toBe(402);
      expect(respond(await handle('/post/1', { authorization: `Bearer ${token('/post/1', { secret: 'wrong' })}` })).status).toBe(402);
    });

    it('treats a person presenting a Crawlgate token as an agent, but not one using the site’s own bearer auth', async () => {
      const { handle } = setup();
      expect(respond(await handle('/post/1', { 'user-agent': BROWSER, 'x-crawlgate-token': token('/post/2') })).status).toBe(402);
      expect(respond(await handle('/post/1', { 'user-agent': BROWSER, authorization: `Bearer ${token('/post/2')}` })).status).toBe(402);
      expect(await handle('/post/1', { 'user-agent': BROWSER, authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig' })).toEqual({ kind: 'pass' });
    });
  });

  describe('who pays', () => {
    it('follows isBot when it has an opinion, the catalogue otherwise', async () => {
      const { handle } = setup({ isBot: (request) => (request.headers['x-internal'] ? false : request.url.startsWith('/api') || undefined) });
      expect(respond(await handle('/api/x', { 'user-agent': BROWSER })).status).toBe(402);
      expect(await handle('/post/1', { 'x-internal': '1' })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/1')).status).toBe(402);
    });

    it('blocks with 403 and allows per the policy, without calling the API', async () => {
      const { fake, handle } = setup({ policy: { bots: { GPTBot: 'block' }, categories: { 'ai-assistant': 'allow' } } });
      const blocked = respond(await handle('/post/1'));
      expect(blocked.status).toBe(403);
      expect(blocked.json.detail).toMatch(/GPTBot/);
      expect(await handle('/post/1', { 'user-agent': 'Mozilla/5.0 (compatible; ChatGPT-User/1.0; +https://openai.com/bot)' })).toEqual({ kind: 'pass' });
      expect(fake.calls).toEqual([]);
    });
  });

  describe('payments', () => {
    it('settles an X-PAYMENT through the API and passes with X-PAYMENT-RESPONSE, the price and the token', async () => {
      const accessToken = token('/post/1');
      const { fake, handle, warnings } = setup({}, { verify: (id) => paid(id, accessToken) });
      await handle('/post/1');
      const decision = await handle('/post/1', { 'x-payment': payment(1) });
      expect(fake.calls).toEqual(['POST /v1/gates', 'POST /v1/gates/gate-1/verify']);
      expect(decision).toEqual({
        kind: 'pass-after-payment',
        headers: { 'x-payment-response': expect.any(String), 'crawler-charged': 'USD 0.01', 'x-crawlgate-token': accessToken, 'cache-control': 'no-store' },
      });
      const headers = (decision as Extract<Decision, { kind: 'pass-after-payment' }>).headers;
      expect(decodeBase64Json(headers['x-payment-response'])).toEqual({ success: true, transaction: '0xabc', network: 'local', payer: '0xpayer' });
      expect(warnings).toEqual([]);
      // The paid gate leaves the cache: the next unpaid request gets a gate of its own.
      expect(respond(await handle('/post/1')).json.id).toBe('gate-2');
    });

    it('answers a v2 PAYMENT-SIGNATURE with PAYMENT-RESPONSE in CAIP-2 terms', async () => {
      const { handle } = setup({}, { verify: (id) => paid(id, token('/post/1')) });
      const decision = await handle('/post/1', { 'payment-signature': payment(2) });
      const headers = (decision as Extract<Decision, { kind: 'pass-after-payment' }>).headers;
      expect(headers['x-payment-response']).toBeUndefined();
      expect(decodeBase64Json(headers['payment-response'])).toMatchObject({ success: true, network: 'eip155:31337' });
    });

    it('warns when the token the API issued does not verify with the configured secret', async () => {
      const { handle, warnings } = setup({}, { verify: (id) => paid(id, token('/post/1', { secret: 'rotated-elsewhere' })) });
      expect((await handle('/post/1', { 'x-payment': payment(1) })).kind).toBe('pass-after-payment');
      expect(warnings).toEqual([expect.stringMatching(/check the secret option/)]);
    });

    it('answers a settlement still pending with 503 and Retry-After, and sends the same proof to the same gate again', async () => {
      const { fake, handle } = setup({}, { verify: () => ({ status: 202, body: { status: 'settlement_pending' }, headers: { 'retry-after': '7' } }) });
      const answer = respond(await handle('/post/1', { 'x-payment': payment(1) }));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('7');
      expect(answer.json.detail).toMatch(/never charged twice/);
      await handle('/post/1', { 'x-payment': payment(1) });
      expect(fake.calls.filter((c) => c.endsWith('/verify'))).toEqual(['POST /v1/gates/gate-1/verify', 'POST /v1/gates/gate-1/verify']);
    });

    it('answers a rejected payment 402 with the gate and a failed settlement header', async () => {
      const { handle } = setup({}, { verify: () => ({ status: 402, body: { detail: 'Insufficient funds', reason: 'insufficient_funds' } }) });
      const answer = respond(await handle('/post/1', { 'x-payment': payment(1) }));
      expect(answer.status).toBe(402);
      expect(answer.json.id).toBe('gate-1');
      expect(answer.headers['crawler-price']).toBe('USD 0.01');
      expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({ success: false, errorReason: 'insufficient_funds', transaction: '' });
    });

    it('pays a fresh gate when the cached one expired or was paid by another proof meanwhile', async () => {
      const gone = setup({}, { verify: (id) => (id === 'gate-1' ? { status: 404, body: { detail: 'Gate not found or expired' } } : paid(id, token('/post/1'))) });
      await gone.handle('/post/1');
      expect((await gone.handle('/post/1', { 'x-payment': payment(1) })).kind).toBe('pass-after-payment');
      expect(gone.fake.calls).toEqual(['POST /v1/gates', 'POST /v1/gates/gate-1/verify', 'POST /v1/gates', 'POST /v1/gates/gate-2/verify']);

      const taken = setup({}, { verify: () => ({ status: 409, body: { detail: 'This payment proof was already used for another gate' } }) });
      const answer = respond(await taken.handle('/post/1', { 'x-payment': payment(1) }));
      expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({ success: false, errorReason: 'duplicate_settlement' });
      expect(taken.fake.count('POST /v1/gates/')).toBe(2);
    });

    it('answers an unreadable payment header 402 without asking the API to verify it', async () => {
      const { fake, handle } = setup();
      for (const bad of ['not base64!', encodeBase64Json({ x402Version: 1, scheme: 'exact' })]) {
        const answer = respond(await handle('/post/1', { 'x-payment': bad }));
        expect(answer.status).toBe(402);
        expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({ success: false, errorReason: 'invalid_payload' });
      }
      expect(fake.count('POST /v1/gates/')).toBe(0);
    });

    it('honours crawler-max-price and crawler-exact-price before any payment', async () => {
      const { fake, handle } = setup();
      const capped = respond(await handle('/post/1', { 'crawler-max-price': 'USD 0.005', 'x-payment': payment(1) }));
      expect(capped.status).toBe(402);
      expect(capped.headers['crawler-error']).toMatch(/crawler-max-price/);
      expect(respond(await handle('/post/1', { 'crawler-exact-price': 'USD 0.02', 'x-payment': payment(1) })).status).toBe(402);
      expect(respond(await handle('/post/1', { 'crawler-max-price': 'ten dollars' })).status).toBe(400);
      expect(fake.count('POST /v1/gates/')).toBe(0);
      expect((await handle('/post/1', { 'crawler-max-price': 'USD 5', 'x-payment': payment(1) })).kind).toBe('pass-after-payment');
    });
  });

  describe('when the API fails', () => {
    const failures: [string, () => FakeAnswer | Promise<FakeAnswer>][] = [
      ['unreachable', () => Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }))],
      ['failing', () => ({ status: 500 })],
      ['slow', () => new Promise<never>(() => {})],
    ];

    it.each(failures)('serves when failMode is open and the API is %s, and warns without secrets', async (_name, failure) => {
      const { fake, handle, warnings } = setup({ timeoutMs: 50 });
      fake.answerWith(failure);
      expect(await handle('/post/1', { authorization: `Bearer ${token('/post/2')}` })).toEqual({ kind: 'pass' });
      expect(warnings).toEqual([expect.stringMatching(/^crawlgate: POST \/v1\/gates: .*failMode open: serving the request$/)]);
      expect(warnings.join()).not.toMatch(new RegExp([SITE_TOKEN, SECRET, token('/post/2').split('.')[0]].join('|')));
    });

    it('answers 503 when failMode is closed', async () => {
      const { fake, handle, warnings } = setup({ failMode: 'closed' });
      fake.answerWith(() => ({ status: 503 }));
      const answer = respond(await handle('/post/1'));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('30');
      expect(warnings).toEqual([expect.stringMatching(/unexpected HTTP 503.*answering 503/)]);
    });

    it('treats a misconfigured site (401 from the API) as a failure, not as a free path', async () => {
      const { fake, handle, warnings } = setup({ failMode: 'closed' });
      fake.answerWith(() => ({ status: 401, body: { detail: 'Invalid site token' } }));
      expect(respond(await handle('/post/1')).status).toBe(503);
      expect(warnings[0]).toMatch(/unexpected HTTP 401: Invalid site token/);
    });
  });

  describe('/.well-known/pay.json', () => {
    it('publishes the site offer, asking the API once a minute at most', async () => {
      const { fake, handle } = setup();
      const answer = respond(await handle('/.well-known/pay.json', { 'user-agent': BROWSER }));
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('public, max-age=60');
      expect(answer.json).toEqual(expect.any(Object));
      await handle('/.well-known/pay.json');
      expect(fake.calls).toEqual(['GET /v1/site']);
    });

    it('follows the failMode when the API is down', async () => {
      const open = setup();
      open.fake.answerWith(() => ({ status: 502 }));
      expect(await open.handle('/.well-known/pay.json')).toEqual({ kind: 'pass' });
      const closed = setup({ failMode: 'closed' });
      closed.fake.answerWith(() => ({ status: 502 }));
      expect(respond(await closed.handle('/.well-known/pay.json')).status).toBe(503);
    });
  });
});
