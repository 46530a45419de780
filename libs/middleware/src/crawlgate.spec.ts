import {
  ACCESS_TOKEN_CLOCK_SKEW_SECONDS,
  decodeBase64Json,
  encodeBase64Json,
  readGate,
  secretFingerprint,
  signAccessToken,
  signGate,
  signSiwxNonce,
  verifyGate,
} from '@crawlgate/core';
import { startAgentDirectory } from '../testing/agent-directory';
import { handSigned } from '../testing/signing';
import {
  FAKE_API_URL,
  FAKE_EXACT_PAYLOAD,
  FAKE_SITE_ID,
  fakeApi,
  fakePaymentV1,
  gateRequest,
  paid,
  pending,
  type FakeAnswer,
  type FakeApiOptions,
} from '../testing/fake-api';
import { heldCrawlerRanges } from '../testing/held-crawler-ranges';
import { createCrawlgate, type CrawlgateOptions, type CrawlgateRequest } from './crawlgate';
import type { Decision } from './decision';
import { AGENT_HEADERS } from './plain-person';
import { nodeHeaders, type HeaderRecord } from './request-headers';

const SECRET = 'secret-of-the-site';
const SITE_TOKEN = 'st_site_token_never_logged';
const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
const BROWSER =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

const gates: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(gates.splice(0).map((gate) => gate.close()));
});

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
    // No fetch of the operators' IP ranges from a unit test (crawler-ips.attack.spec.ts serves them on loopback).
    crawlerIps: false,
    ...options,
  });
  gates.push(gate);
  const handle = (url: string, headers: CrawlgateRequest['headers'] = {}, ip = '10.0.0.1') =>
    gate.handle({ method: 'GET', url, headers: { 'user-agent': GPTBOT, ...headers }, ip });
  return { fake, warnings, handle, gate };
}

function token(url: string, { secret = SECRET, siteId = FAKE_SITE_ID, gateId = 'gate-1' } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return signAccessToken({ gate_id: gateId, site_id: siteId, url, kid: 'k1', iat: now, exp: now + 1800 }, secret);
}

const PAYLOAD = FAKE_EXACT_PAYLOAD;
const paymentV1 = fakePaymentV1;

type Offer = { accepts: { extra?: Record<string, unknown> }[] };

/** A v2 requirement echoing `offer`'s, whose extra.gate_id names the gate. */
const acceptedOf = (offer: Offer, scheme = 'exact') => ({
  scheme,
  network: 'eip155:31337',
  amount: '10000',
  asset: '0x' + '1'.repeat(40),
  payTo: '0x' + '2'.repeat(40),
  maxTimeoutSeconds: 300,
  extra: offer.accepts[0].extra,
});

/** A v2 payment of the gate `offer` names. */
function paymentV2(offer: Offer) {
  return encodeBase64Json({ x402Version: 2, accepted: acceptedOf(offer), payload: PAYLOAD });
}

const CHANNEL_ID = `0x${'c'.repeat(64)}`;

/** x402's batch-settlement payment for the gate of `offer`: a voucher, or a refund request with the voucher for what was charged. */
const refundRequest = (offer: Offer, type = 'refund') =>
  encodeBase64Json({
    x402Version: 2,
    accepted: acceptedOf(offer, 'batch-settlement'),
    payload: {
      type,
      channelConfig: {
        payer: '0x' + '3'.repeat(40),
        payerAuthorizer: '0x' + '3'.repeat(40),
        receiver: '0x' + '2'.repeat(40),
        receiverAuthorizer: '0x' + '4'.repeat(40),
        token: '0x' + '1'.repeat(40),
        withdrawDelay: 86400,
        salt: '0x' + '0'.repeat(64),
      },
      voucher: { channelId: CHANNEL_ID, maxClaimableAmount: '20000', signature: '0x' + 'ab'.repeat(65) },
    },
  });

/** A site offer that makes every page free, for answers that must not be taken. */
const SITE_FREE = {
  site_id: FAKE_SITE_ID,
  domain: 'example.com',
  default_price_usd: '0',
  rules: [],
  pricing_version: 1,
  network: 'local',
  caip2: 'eip155:31337',
  chain_id: 31337,
  asset: '0x0000000000000000000000000000000000000001',
  x402_network: 'local',
  asset_name: 'USD Coin',
  asset_version: '2',
  pay_to: '0x0000000000000000000000000000000000000002',
  gate_ttl_seconds: 900,
  settlement_timeout_seconds: 30,
  max_url_length: 2048,
  api_base_url: FAKE_API_URL,
};

function respond(decision: Decision) {
  if (decision.kind !== 'respond') throw new Error(`expected a response, got ${decision.kind}`);
  return { ...decision, json: JSON.parse(decision.body) };
}

/**
 * Verify answers: paid with `paidToken` (a token for `url`, signed once: a test comparing the token
 * answered with one signed later would fail when a second boundary fell between them).
 */
const paysFor = (url: string, paidToken = token(url)): FakeApiOptions => ({
  verify: (gateId) => paid(gateId, paidToken, url),
});

describe('createCrawlgate', () => {
  it('refuses a configuration without credentials', () => {
    expect(() => createCrawlgate({ apiUrl: '', siteId: 'x', siteToken: 'y', secret: 'z' })).toThrow(/apiUrl/);
    expect(() => createCrawlgate({ apiUrl: FAKE_API_URL, siteId: 'x', siteToken: 'y', secret: [] })).toThrow(/secret/);
  });

  it('refuses an apiUrl with credentials, not http(s), or plain http off loopback, and a site token no header can carry, quoting neither', () => {
    const base = { siteId: 'x', secret: 'z', siteToken: SITE_TOKEN };
    for (const apiUrl of [
      'http://user:Sup3rS3cret@api.example/',
      'ftp://api.example',
      'not a url',
      'http://api.example',
    ]) {
      expect(() => createCrawlgate({ ...base, apiUrl })).toThrow(/apiUrl/);
      try {
        createCrawlgate({ ...base, apiUrl });
      } catch (error) {
        expect((error as Error).message).not.toContain('Sup3rS3cret');
      }
    }
    // Plain http where the publisher says the network is trusted, and on loopback.
    for (const apiUrl of ['http://127.0.0.1:9', 'http://localhost:3000', 'http://[::1]:3000'])
      createCrawlgate({ ...base, apiUrl, crawlerIps: false }).close();
    createCrawlgate({
      ...base,
      apiUrl: 'http://api.internal:3000',
      allowPlainHttpApi: true,
      crawlerIps: false,
    }).close();
    for (const siteToken of [`${SITE_TOKEN}\nst_old`, `${SITE_TOKEN}\u0000`, `${SITE_TOKEN} `]) {
      expect(() => createCrawlgate({ ...base, apiUrl: FAKE_API_URL, siteToken })).toThrow(/siteToken/);
      try {
        createCrawlgate({ ...base, apiUrl: FAKE_API_URL, siteToken });
      } catch (error) {
        expect((error as Error).message).not.toContain(SITE_TOKEN);
      }
    }
  });

  it('never writes the site token or a secret in a warning, whatever the API or the network echoes', async () => {
    const echoing = setup({}, {});
    echoing.fake.answerWith(() => ({ status: 500, body: { detail: `proxy saw ${SITE_TOKEN} and ${SECRET}` } }));
    await echoing.gate.ready();
    const thrown = setup({
      fetch: async () => {
        throw new TypeError(`Headers.append: "${SITE_TOKEN}" is an invalid header value, secret ${SECRET}`);
      },
    });
    await thrown.gate.ready();
    // An echo that a cut at 200 characters would split: blanked before the cut.
    const padded = setup({}, {});
    padded.fake.answerWith(() => ({ status: 500, body: { detail: `proxy saw ${'x'.repeat(180)}${SITE_TOKEN}` } }));
    await padded.gate.ready();
    const warnings = [...echoing.warnings, ...thrown.warnings, ...padded.warnings];
    expect(warnings.join('\n')).not.toContain(SITE_TOKEN.slice(0, 8));
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    for (const warning of warnings) {
      expect(warning).not.toContain(SITE_TOKEN);
      expect(warning).not.toContain(SECRET);
    }
    expect(warnings.join('\n')).toContain('[redacted]');
  });

  it('loads the site’s terms once at start-up, then lets people and always-free paths through with no API call', async () => {
    const { fake, handle } = setup();
    expect(await handle('/post/1', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
    expect(await handle('/robots.txt')).toEqual({ kind: 'pass' });
    expect(await handle('/free/post')).toEqual({ kind: 'pass' });
    expect(fake.calls).toEqual(['GET /v1/site']);
  });

  it('reads a hand-built record’s headers in any spelling: a payment under X-Payment is no person’s request', async () => {
    const { gate } = setup({}, paysFor('/post/1'));
    await gate.ready();
    const spelled = await gate.handle({
      method: 'GET',
      url: '/post/1',
      headers: { 'user-agent': BROWSER, 'X-Payment': paymentV1() },
    });
    const lower = await gate.handle({
      method: 'GET',
      url: '/post/1',
      headers: { 'user-agent': BROWSER, 'x-payment': paymentV1() },
    });
    expect(spelled.kind).toBe('pass-after-payment');
    expect(spelled).toEqual(lower);
  });

  it('decides the same for Node’s header records, which a plain person’s request may skip the full decision with, and counts the same', async () => {
    // Each request through two gates: Node's marked record (plain-person.ts may answer it) and a
    // hand-built copy (the full decision always): the same answers, the same counts.
    // One token for every verification, as the API gives a settled payment sent again: a token signed
    // per call changes with the second, and a gate counts a new token as paid, an old one as a re-read.
    const paidToken = token('/post/1');
    const paysOnce: FakeApiOptions = { verify: (gateId) => paid(gateId, paidToken, '/post/1') };
    const full = setup({ licensing: { path: '/license' } }, paysOnce);
    const quick = setup({ licensing: { path: '/license' } }, paysOnce);
    const signatureAgent = {
      'signature-agent': '"https://chatgpt.com"',
      'signature-input': 'sig1=();tag="web-bot-auth"',
    };
    const requests: [string, HeaderRecord][] = [
      ...[
        '/post/1',
        '/POST/1',
        '/post/1/',
        '/post/1?x=1',
        '/post/1;x',
        '/post/%31',
        '//post/1',
        '/./post/1',
        'http://example.com/post/1',
        '/free/post',
        '/robots.txt',
        '/.well-known/pay.json',
        '/license',
        '/license?x',
      ].map((url): [string, HeaderRecord] => [url, { 'user-agent': BROWSER }]),
      ['/post/1', { 'user-agent': BROWSER, 'x-crawlgate-token': token('/post/1') }],
      ['/post/2', { 'user-agent': BROWSER, 'x-crawlgate-token': token('/post/1') }],
      ['/post/2', { 'user-agent': BROWSER, authorization: `Bearer ${token('/post/1')}` }],
      ['/post/2', { 'user-agent': BROWSER, authorization: 'Bearer site-session' }],
      ['/post/1', { 'user-agent': BROWSER, 'x-payment': paymentV1() }],
      ['/post/1', { 'user-agent': BROWSER, 'payment-signature': 'not base64' }],
      ['/post/2', { 'user-agent': BROWSER, ...signatureAgent }],
      ['/post/2', { 'user-agent': GPTBOT }],
      ['/post/2', { 'user-agent': '' }],
      ['/post/2', {}],
      ['/post/2', { 'user-agent': `${BROWSER} ExampleBot/1.0` }],
    ];
    const view = (decision: Decision) =>
      decision.kind === 'respond' ? { status: decision.status, type: decision.headers['content-type'] } : decision;
    // Each also as HEAD and POST, and routed as a rewrite before the gate may route it (routedUrl).
    const variants = [
      { method: 'GET' },
      { method: 'HEAD' },
      { method: 'POST' },
      { method: 'GET', routedUrl: '/license' },
      { method: 'GET', routedUrl: '/.well-known/pay.json' },
      { method: 'GET', routedUrl: '/post/3' },
    ];
    for (const [url, headers] of requests) {
      for (const variant of variants) {
        const copy = () => JSON.parse(JSON.stringify(headers)) as HeaderRecord;
        const decided = await full.gate.handle({ ...variant, url, headers: copy(), ip: '10.0.0.1' });
        const quickly = await quick.gate.handle({ ...variant, url, headers: nodeHeaders(copy()), ip: '10.0.0.1' });
        expect([url, variant, headers, view(quickly)]).toEqual([url, variant, headers, view(decided)]);
      }
    }
    await Promise.all([full.gate.close(), quick.gate.close()]);
    expect(quick.fake.reports).toEqual(full.fake.reports);
    const persons = (full.fake.reports[0] as { crawlers: { crawler: string; requests: number }[] }).crawlers.filter(
      (count) => count.crawler === 'person',
    );
    expect(persons.map((count) => count.requests)).toEqual([70]);
  });

  it('reads no header of a person the quick path does not check: the User-Agent and the agents’ headers only', async () => {
    // isBot answering nothing keeps the full decision; the record, marked, is read as it is.
    const { gate } = setup({ isBot: () => undefined, licensing: { path: '/license' } });
    await gate.ready();
    const read = new Set<string>();
    const watched = nodeHeaders({ host: 'example.com', 'user-agent': BROWSER, accept: '*/*', cookie: 'a=b' });
    const headers = new Proxy(watched, {
      get(target, name, receiver) {
        if (typeof name === 'string') read.add(name);
        return Reflect.get(target, name, receiver);
      },
    });
    for (const url of ['/post/1', '/free/post', '/a/b?c=d', '/license/'])
      expect(await gate.handle({ method: 'GET', url, headers, ip: '10.0.0.1' })).toEqual({ kind: 'pass' });
    expect([...read].filter((name) => name !== 'user-agent' && !AGENT_HEADERS.includes(name))).toEqual([]);
    expect(read.has('user-agent')).toBe(true);
  });

  it('takes a person’s plain request the full way when the site’s isBot may call it a bot', async () => {
    const { gate } = setup({ isBot: (request) => request.url.startsWith('/post') });
    await gate.ready();
    const decision = gate.handleNow({ method: 'GET', url: '/post/1', headers: nodeHeaders({ 'user-agent': BROWSER }) });
    expect(respond(decision as Decision).status).toBe(402);
  });

  it('handleNow decides at once what needs no I/O, and waits for the first load and for the API', async () => {
    const { gate } = setup();
    const request = gateRequest;
    // Before the terms loaded, even a person waits for them: the first answer is never a guess.
    const early = gate.handleNow(request('/post/1', { 'user-agent': GPTBOT }));
    expect(early).toBeInstanceOf(Promise);
    expect(respond(await early).status).toBe(402);
    expect(gate.handleNow(request('/post/1', { 'user-agent': BROWSER }))).toEqual({ kind: 'pass' });
    expect(gate.handleNow(request('/post/1', { 'user-agent': GPTBOT, 'x-crawlgate-token': token('/post/1') }))).toEqual(
      { kind: 'pass' },
    );
    // The same token on another path, and no token: a 402 at once, never a pass.
    const other = gate.handleNow(request('/post/2', { 'user-agent': GPTBOT, 'x-crawlgate-token': token('/post/1') }));
    expect(respond(other as Decision).status).toBe(402);
    // A payment is the API's to confirm: a promise, and (the fake API confirming nothing) no pass.
    const paying = gate.handleNow(request('/post/1', { 'user-agent': GPTBOT, 'x-payment': paymentV1() }));
    expect(paying).toBeInstanceOf(Promise);
    expect((await paying).kind).toBe('respond');
  });

  it('answers a charged bot 402 with a gate it signs itself: this path, this price, PAYMENT-REQUIRED, no-store', async () => {
    const { fake, handle } = setup();
    const answer = respond(await handle('/post/1?utm=x'));
    expect(answer.status).toBe(402);
    expect(answer.headers).toMatchObject({ 'cache-control': 'no-store', 'crawler-price': 'USD 0.01' });
    expect(answer.json).toMatchObject({
      url: '/post/1',
      price_usd: '0.01',
      site_id: FAKE_SITE_ID,
      verify_url: `${FAKE_API_URL}/v1/gates/${answer.json.id}/verify`,
    });
    expect(answer.json.accepts[0]).toMatchObject({
      resource: 'https://example.com/post/1?utm=x',
      extra: { gate_id: answer.json.id },
    });
    expect(verifyGate(answer.json.id, { secret: SECRET, siteId: FAKE_SITE_ID })).toMatchObject({
      valid: true,
      gate: { path: '/post/1', micros: 10_000n },
    });
    expect(decodeBase64Json(answer.headers['payment-required'])).toMatchObject({
      x402Version: 2,
      accepts: [{ network: 'eip155:31337', extra: { gate_id: answer.json.id } }],
    });
    // Each 402 is a fresh gate: two visitors never race to pay one.
    expect(respond(await handle('/post/1')).json.id).not.toBe(answer.json.id);
    expect(fake.calls).toEqual(['GET /v1/site']);
  });

  it('names no operator for the group of agents it cannot name, whichever signer came first', async () => {
    const signers = [await startAgentDirectory(), await startAgentDirectory()];
    try {
      const { fake, handle, gate } = setup({
        webBotAuth: { allowLoopbackDirectories: true, directoryTimeoutMs: 10_000 },
      });
      await gate.ready();
      for (const signer of signers)
        await handle('/post/signed', {
          host: 'example.com',
          ...(await handSigned({ key: signer.key, agent: signer.origin, url: 'https://example.com/post/signed' })),
        });
      await gate.close();
      const crawlers = (
        fake.reports[0] as { crawlers: { crawler: string; operator: string | null; requests: number }[] }
      ).crawlers;
      expect(crawlers.filter((count) => count.crawler === 'unknown-automation')).toEqual([
        expect.objectContaining({ operator: null, requests: 2, verified: true }),
      ]);
    } finally {
      await Promise.all(signers.map((signer) => signer.close()));
    }
  });

  it('reports the 402s it answered in one batch, and loses only counts when the report fails', async () => {
    const { fake, handle, gate, warnings } = setup();
    for (let i = 0; i < 5; i++) await handle(`/post/${i}`);
    await handle('/free/x');
    await gate.close();
    const day = new Date().toISOString().slice(0, 10);
    expect(fake.reports).toHaveLength(1);
    expect(fake.reports[0]).toMatchObject({ counts: [{ day, gates: 5 }] });
    // The same call carries what it did per crawler: five 402s and a free page passed.
    const crawlers = (fake.reports[0] as { crawlers: { action: string; requests: number }[] }).crawlers;
    expect(crawlers.map(({ action, requests }) => [action, requests])).toEqual([
      ['charged', 5],
      ['passed', 1],
    ]);

    const failing = setup();
    failing.fake.answerWith((call) => (call === 'POST /v1/site/gate-counts' ? { status: 500 } : undefined));
    await failing.handle('/post/1');
    await failing.gate.close();
    expect(failing.warnings.join()).toMatch(/gate and crawler counts not reported/);
    expect(warnings).toEqual([]);
  });

  it('follows a pricing change at the next refresh, and keeps the last pricing when a refresh fails', async () => {
    const { fake, handle } = setup({ refreshMs: 20 });
    expect(respond(await handle('/post/1')).json.price_usd).toBe('0.01');
    fake.setSite({ default_price_usd: '0.5' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(respond(await handle('/post/1')).json.price_usd).toBe('0.5');
    fake.answerWith(() => ({ status: 503 }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(respond(await handle('/post/1')).json.price_usd).toBe('0.5');
  });

  describe('access tokens', () => {
    it('lets a token of this path through with no API call, from either header', async () => {
      const { fake, handle } = setup();
      expect(await handle('/post/1', { 'x-crawlgate-token': token('/post/1') })).toEqual({ kind: 'pass' });
      expect(await handle('/post/1', { authorization: `Bearer ${token('/post/1')}` })).toEqual({ kind: 'pass' });
      expect(fake.calls).toEqual(['GET /v1/site']);
    });

    it('accepts any secret of a rotation the API lists, and nothing signed for another path or site', async () => {
      const { handle, fake } = setup({ secret: ['new-secret', SECRET] });
      fake.setSite({
        usable_secrets: [
          { fingerprint: secretFingerprint('new-secret'), retires_at: null },
          { fingerprint: secretFingerprint(SECRET), retires_at: new Date(Date.now() + 3_600_000).toISOString() },
        ],
      });
      expect(await handle('/post/1', { 'x-crawlgate-token': token('/post/1') })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/2', { 'x-crawlgate-token': token('/post/1') })).status).toBe(402);
      expect(
        respond(
          await handle('/post/1', {
            'x-crawlgate-token': token('/post/1', { siteId: '22222222-2222-4222-8222-222222222222' }),
          }),
        ).status,
      ).toBe(402);
      expect(
        respond(await handle('/post/1', { 'x-crawlgate-token': token('/post/1', { secret: 'guessed' }) })).status,
      ).toBe(402);
    });

    it('binds a token to the path as requestPath() spells it once: an escaped "?" or "#" is part of the path, never a cut', async () => {
      // requestPath('/post/1%3Fx') is '/post/1?x'; spelling that path again would cut it to '/post/1'.
      const { handle } = setup({}, paysFor('/post/1?x'));
      for (const url of ['/post/1%3Fx', '/post/1%3fx', '/post/1%23x']) {
        expect(respond(await handle(url, { 'x-crawlgate-token': token('/post/1') })).status).toBe(402);
      }
      expect(await handle('/post/1%3Fx', { 'x-crawlgate-token': token('/post/1?x') })).toEqual({ kind: 'pass' });
      // The paid visitor of such a path gets it: the API's token binds the gate's path, '/post/1?x'.
      expect((await handle('/post/1%3Fx', { 'x-payment': paymentV1() })).kind).toBe('pass-after-payment');
    });

    it('treats a person presenting a Crawlgate token as an agent, but not one using the site’s own bearer auth', async () => {
      const { handle } = setup();
      expect(
        respond(await handle('/post/2', { 'user-agent': BROWSER, 'x-crawlgate-token': token('/post/1') })).status,
      ).toBe(402);
      expect(await handle('/post/2', { 'user-agent': BROWSER, authorization: 'Bearer site-session-abc' })).toEqual({
        kind: 'pass',
      });
    });
  });

  describe('who pays', () => {
    it('follows isBot when it has an opinion, the catalogue otherwise', async () => {
      const { handle } = setup({
        isBot: (request) =>
          request.headers['x-test'] === 'bot' ? true : request.headers['x-test'] === 'person' ? false : undefined,
      });
      expect(respond(await handle('/post/1', { 'user-agent': BROWSER, 'x-test': 'bot' })).status).toBe(402);
      expect(await handle('/post/1', { 'x-test': 'person' })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/1')).status).toBe(402);
    });

    it('blocks with 403 and allows per the policy, without calling the API', async () => {
      // CCBot publishes no IP ranges: its User-Agent is taken as it is (crawler-ips.attack.spec.ts has the others).
      const { fake, handle } = setup({ policy: { bots: { GPTBot: 'block', CCBot: 'allow' } } });
      expect(respond(await handle('/post/1'))).toMatchObject({
        status: 403,
        headers: { 'crawler-error': 'CrawlerForbidden' },
      });
      expect(await handle('/post/1', { 'user-agent': 'CCBot/2.0' })).toEqual({ kind: 'pass' });
      expect(fake.calls).toEqual(['GET /v1/site']);
    });
  });

  describe('payments', () => {
    it('settles an X-PAYMENT at a gate minted for this path and passes with X-PAYMENT-RESPONSE, the price and the token', async () => {
      const paidToken = token('/post/1');
      const { fake, handle } = setup({}, paysFor('/post/1', paidToken));
      const decision = await handle('/post/1', { 'x-payment': paymentV1() });
      expect(decision.kind).toBe('pass-after-payment');
      const headers = (decision as { headers: Record<string, string> }).headers;
      expect(decodeBase64Json(headers['x-payment-response'])).toMatchObject({
        success: true,
        transaction: '0xabc',
        network: 'local',
      });
      expect(headers).toMatchObject({
        'crawler-charged': 'USD 0.01',
        'x-crawlgate-token': paidToken,
        'cache-control': 'no-store',
      });
      const [verify] = fake.calls.filter((call) => call.includes('/verify'));
      expect(readGate(decodeURIComponent(verify.split('/')[3]))).toMatchObject({ path: '/post/1' });
    });

    it('settles a v2 PAYMENT-SIGNATURE at the gate it names, with PAYMENT-RESPONSE', async () => {
      const seen: string[] = [];
      const { handle } = setup(
        {},
        { verify: (gateId) => (seen.push(gateId), paid(gateId, token('/post/1'), '/post/1')) },
      );
      const offer = respond(await handle('/post/1')).json;
      const decision = await handle('/post/1', { 'payment-signature': paymentV2(offer) });
      expect(decision.kind).toBe('pass-after-payment');
      expect(
        decodeBase64Json((decision as { headers: Record<string, string> }).headers['payment-response']),
      ).toMatchObject({ success: true });
      expect(seen).toEqual([offer.id]);
    });

    describe('x402 batch-settlement refund requests', () => {
      const refunded = (gateId: string): FakeAnswer => ({
        status: 200,
        body: {
          status: 'refunded',
          gate_id: gateId,
          channel_id: CHANNEL_ID,
          payer: '0x' + '3'.repeat(40),
          refund_amount: '30000',
          refund_tx_hash: `0x${'a'.repeat(64)}`,
          network: 'local',
          channel_state: {
            channelId: CHANNEL_ID,
            balance: '20000',
            totalClaimed: '20000',
            withdrawRequestedAt: 0,
            refundNonce: '1',
            chargedCumulativeAmount: '20000',
          },
        },
      });

      it('answers a refund the API made 200 with its PAYMENT-RESPONSE and no page, no token', async () => {
        const { handle } = setup({}, { verify: refunded });
        const offer = respond(await handle('/post/1')).json;
        const answer = respond(await handle('/post/1', { 'payment-signature': refundRequest(offer) }));
        expect(answer.status).toBe(200);
        expect(answer.json).toEqual({ message: 'Refund acknowledged', channelId: CHANNEL_ID });
        expect(answer.headers['cache-control']).toBe('no-store');
        expect(answer.headers['x-crawlgate-token']).toBeUndefined();
        expect(decodeBase64Json(answer.headers['payment-response'])).toMatchObject({
          success: true,
          transaction: `0x${'a'.repeat(64)}`,
          amount: '30000',
          extra: { channelState: { balance: '20000', refundNonce: '1' } },
        });
      });

      it('never serves when the API answers a voucher or an exact payment with a refund', async () => {
        const { handle } = setup({}, { verify: refunded });
        const offer = respond(await handle('/post/1')).json;
        for (const header of [refundRequest(offer, 'voucher'), paymentV2(offer)]) {
          const answer = respond(await handle('/post/1', { 'payment-signature': header }));
          expect(answer.status).toBe(402);
          expect(decodeBase64Json(answer.headers['payment-response'])).toMatchObject({ success: false });
        }
      });
    });

    it('refuses a v2 payment naming a gate of another path, or a gate it did not sign, without asking the API', async () => {
      const { fake, handle } = setup({}, paysFor('/post/1'));
      const other = respond(await handle('/post/other')).json;
      const forged = {
        accepts: [{ extra: { gate_id: signGate({ ...readGate(other.id)!, path: '/post/1' }, 'not-the-secret') } }],
      };
      for (const offer of [other, forged]) {
        const answer = respond(await handle('/post/1', { 'payment-signature': paymentV2(offer) }));
        expect(answer.status).toBe(402);
        expect(decodeBase64Json(answer.headers['payment-response'])).toMatchObject({
          success: false,
          errorReason: 'invalid_payload',
        });
      }
      expect(fake.count('POST /v1/gates')).toBe(0);
    });

    it('refuses a v2 payment whose gate_id is not a string as unreadable, without asking the API', async () => {
      const { fake, handle } = setup({}, paysFor('/post/1'));
      for (const gateId of [{ toString: 1 }, 42, ['gate'], null]) {
        const offer = { accepts: [{ extra: { gate_id: gateId as unknown as string } }] };
        const answer = respond(await handle('/post/1', { 'payment-signature': paymentV2(offer) }));
        expect({ status: answer.status, payment: decodeBase64Json(answer.headers['payment-response']) }).toMatchObject({
          status: 402,
          payment: { success: false, errorReason: 'invalid_payload' },
        });
      }
      expect(fake.calls.filter((call) => call.endsWith('/verify'))).toEqual([]);
    });

    describe('a gate offered below the price of its path now (the price rose since)', () => {
      /** The gate of `offer`, as this site minted it when the path cost `micros`. */
      const offeredAt = (offer: Offer & { id: string }, micros: bigint) => ({
        accepts: [{ extra: { gate_id: signGate({ ...readGate(offer.id)!, micros }, SECRET) } }],
      });

      it('asks the API only for a payment of it already recorded, and serves what the API confirmed', async () => {
        const { fake, handle } = setup({}, paysFor('/post/1'));
        const sent: unknown[] = [];
        fake.answerWith((call, body) => void (call.endsWith('/verify') && sent.push(body.recorded_only)));
        const offer = respond(await handle('/post/1')).json;
        const cheaper = offeredAt(offer, 1n);
        expect((await handle('/post/1', { 'payment-signature': paymentV2(cheaper) })).kind).toBe('pass-after-payment');
        expect((await handle('/post/1', { 'payment-signature': paymentV2(offer) })).kind).toBe('pass-after-payment');
        expect(sent).toEqual([true, undefined]);
      });

      it('asks the API only for a voucher of it already taken: one sent again after its answer was lost is served, a new one is not taken', async () => {
        const { fake, handle } = setup({}, paysFor('/post/1'));
        const sent: unknown[] = [];
        let taken = true;
        fake.answerWith((call, body) => {
          if (!call.endsWith('/verify')) return undefined;
          sent.push(body.recorded_only);
          return taken ? undefined : { status: 402, body: { detail: 'not recorded', reason: 'invalid_payload' } };
        });
        const offer = respond(await handle('/post/1')).json;
        const voucher = refundRequest(offeredAt(offer, 1n), 'voucher');
        expect((await handle('/post/1', { 'payment-signature': voucher })).kind).toBe('pass-after-payment');
        taken = false;
        const refused = respond(await handle('/post/1', { 'payment-signature': voucher }));
        expect(refused.status).toBe(402);
        // The voucher for the gate at today's price is taken as any payment is.
        taken = true;
        expect((await handle('/post/1', { 'payment-signature': refundRequest(offer, 'voucher') })).kind).toBe(
          'pass-after-payment',
        );
        expect(sent).toEqual([true, true, undefined]);
      });
    });

    it('pays the gate minted now for a payment on a target a router may read as another path, never the gate it names', async () => {
      const seen: string[] = [];
      const { handle } = setup(
        {},
        { verify: (gateId) => (seen.push(gateId), paid(gateId, token('/post/1'), '/post/1')) },
      );
      const offer = respond(await handle('/post/1')).json;
      await handle('/other;/../post/1', { 'payment-signature': paymentV2(offer) });
      expect(seen).toHaveLength(1);
      expect(seen[0]).not.toBe(offer.id);
      expect(readGate(seen[0])).toMatchObject({ path: '/post/1' });
    });

    it.each([
      ['";" parameters', { url: '/post/1;session=abc' }, { url: '/other;/../post/1;session=abc' }],
      ['";" and escapes', { url: '/post/caf%C3%A9;s=1' }, { url: '/other;/../post/caf%C3%A9;s=1' }],
      [
        'a mounted app',
        { url: '/premium/post/1', routedUrl: '/post/1' },
        { url: '/premium/post/1', routedUrl: '/post/2' },
      ],
    ])(
      'pays the gate it names on the very target (%s) it was offered on, and a gate minted now on any other',
      async (_, target, other) => {
        const seen: string[] = [];
        const { gate } = setup({}, { verify: (gateId) => (seen.push(gateId), pending(gateId)) });
        const send = (at: CrawlgateRequest['headers'], where: { url: string; routedUrl?: string }) =>
          gate.handle({ method: 'GET', ...where, headers: { 'user-agent': GPTBOT, ...at }, ip: '10.0.0.1' });
        const offer = respond(await send({}, target)).json;
        for (let i = 0; i < 2; i++)
          expect(respond(await send({ 'payment-signature': paymentV2(offer) }, target)).status).toBe(503);
        expect(seen).toEqual([offer.id, offer.id]);
        await send({ 'payment-signature': paymentV2(offer) }, other);
        expect(seen).toHaveLength(3);
        expect(seen[2]).not.toBe(offer.id);
      },
    );

    it('pays a gate with a ref bound to no target (POST /v1/gates) on a ";" target written as its path', async () => {
      const seen: string[] = [];
      const page = '/post/1;session=abc';
      const { handle } = setup({}, { verify: (gateId) => (seen.push(gateId), pending(gateId)) });
      const offer = respond(await handle(page)).json;
      const minted = signGate({ ...readGate(offer.id)!, ref: crypto.randomUUID() }, SECRET);
      const answer = respond(
        await handle(page, { 'payment-signature': paymentV2({ accepts: [{ extra: { gate_id: minted } }] }) }),
      );
      expect(seen).toEqual([minted]);
      // No token opens this target: the 503 sends the payer back here, not to verify_url for one.
      expect(answer.status).toBe(503);
      expect(answer.json).toEqual({
        detail: expect.stringMatching(/Retry this URL with the same payment/),
        gate_id: minted,
      });
    });

    it('never serves when the API confirms a payment whose token does not open this path, nor asks for another', async () => {
      const { handle, warnings } = setup({}, paysFor('/post/cheap'));
      const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
      // The money moved: a 402 would ask an x402 client to pay again; the 503 has it send the same payment.
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBeDefined();
      expect(warnings.join()).toMatch(/does not open \/post\/1/);
    });

    it('never serves a payment the API confirms with a token that has expired, and says so rather than blame the secret', async () => {
      const now = Math.floor(Date.now() / 1000);
      const claims = { gate_id: 'gate-1', site_id: FAKE_SITE_ID, url: '/post/1', kid: 'k1', iat: now - 3600 };
      const expired = signAccessToken({ ...claims, exp: now - 1800 }, SECRET);
      const { handle, warnings } = setup({}, paysFor('/post/1', expired));
      const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
      // A payment sent again after its token's life, or this server's clock ahead of the API's: a 402
      // would have a payer whose clock is right pay again each time, so the same payment is asked again.
      expect(answer.status).toBe(503);
      expect(warnings.join()).toMatch(/token for \/post\/1 has expired/);
      expect(warnings.join()).not.toMatch(/secret/);
    });

    it('never serves a payment the API confirms with a token issued ahead of this server’s clock, and blames the clock', async () => {
      const now = Math.floor(Date.now() / 1000);
      const iat = now + ACCESS_TOKEN_CLOCK_SKEW_SECONDS + 120;
      const claims = { gate_id: 'gate-1', site_id: FAKE_SITE_ID, url: '/post/1', kid: 'k1', iat, exp: iat + 1800 };
      const { handle, warnings } = setup({}, paysFor('/post/1', signAccessToken(claims, SECRET)));
      const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
      expect(answer.status).toBe(503);
      expect(warnings.join()).toMatch(/issued ahead of this server's clock/);
      expect(warnings.join()).not.toMatch(/secret/);
    });

    it.each([
      ['a redirect', { status: 302, headers: { location: 'https://elsewhere.test/' } }],
      ["a proxy's 400 without the API's error", { status: 400, body: '<html>bad request</html>' }],
      ["a proxy's 408", { status: 408 }],
      ["a 409 without the API's error", { status: 409, body: { detail: 42 } }],
      ['a 413 from a load balancer', { status: 413, body: { message: 'too large' } }],
      ["a proxy's 404", { status: 404, body: '<html>Not Found</html>' }],
    ] as [string, FakeAnswer][])(
      'answers %s to a payment with 503 and Retry-After: the call may have settled, a 402 would ask to pay again',
      async (_name, verify) => {
        const { handle } = setup({}, { verify: () => verify });
        const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
        expect(answer.status).toBe(503);
        expect(answer.headers['retry-after']).toBeDefined();
      },
    );

    it('passes on a 503 in which the API says it took nothing (core GateNotCharging): the payer sends the same payment again after its Retry-After, not in doubt', async () => {
      const busy = { detail: 'payments of this payer are in flight; nothing was charged', charged: false };
      const { handle } = setup({}, { verify: () => ({ status: 503, headers: { 'retry-after': '1' }, body: busy }) });
      const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
      expect([answer.status, answer.headers['retry-after'], answer.json.charged]).toEqual([503, '1', false]);
      expect(answer.json.detail).toMatch(/in flight/);
      expect(answer.json.verify_url).toBeUndefined();
      // Whatever answers in the API's place: the site token blanked, and the detail cut.
      const echo = { detail: `${SITE_TOKEN} ${'x'.repeat(10_000)}`, charged: false };
      const { handle: echoing } = setup({}, { verify: () => ({ status: 503, body: echo }) });
      const echoed = respond(await echoing('/post/1', { 'x-payment': paymentV1() }));
      expect(echoed.json.detail).not.toContain(SITE_TOKEN);
      expect(echoed.json.detail.length).toBeLessThanOrEqual(300);
      // Without charged: false, a 503 may follow a settlement: pending, as before.
      const { handle: other } = setup({}, { verify: () => ({ status: 503, body: { detail: 'busy' } }) });
      const pendingAnswer = respond(await other('/post/1', { 'x-payment': paymentV1() }));
      expect([pendingAnswer.status, pendingAnswer.json.charged]).toEqual([503, undefined]);
    });

    it('answers a settlement still pending with 503, Retry-After and the gate to ask for the token', async () => {
      const { handle } = setup({}, { verify: (gateId) => ({ ...pending(gateId), headers: { 'retry-after': '7' } }) });
      const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('7');
      expect(answer.json.verify_url).toBe(`${FAKE_API_URL}/v1/gates/${answer.json.gate_id}/verify`);
      expect(readGate(answer.json.gate_id)?.path).toBe('/post/1');
    });

    it.each([
      [
        'rejected',
        { status: 402, body: { detail: 'bad signature', reason: 'invalid_exact_evm_payload_signature' } },
        'invalid_exact_evm_payload_signature',
      ],
      ['used for another gate', { status: 409, body: { detail: 'used' } }, 'duplicate_settlement'],
      ['gone', { status: 404, body: { detail: 'Gate not found or expired' } }, 'payment_expired'],
      ['refused as bad input', { status: 400, body: { detail: 'nested too deep' } }, 'unexpected_settle_error'],
      [
        'refused with a list of problems',
        { status: 422, body: { detail: [{ loc: ['body', 'payment'], msg: 'control character', type: 'x' }] } },
        'unexpected_settle_error',
      ],
    ] as [string, FakeAnswer, string][])(
      'answers a payment the API %s 402 with a fresh gate and the reason',
      async (_name, verify, reason) => {
        const { handle } = setup({}, { verify: () => verify });
        const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
        expect(answer.status).toBe(402);
        expect(answer.json.url).toBe('/post/1');
        expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({
          success: false,
          errorReason: reason,
        });
      },
    );

    it.each([
      ['fails', () => ({ status: 500 })],
      ['is unreachable', () => Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }))],
      ['is slow', () => new Promise<never>(() => {})],
    ] as [string, () => FakeAnswer | Promise<FakeAnswer>][])(
      'answers 503 with Retry-After when the API %s while settling: never the page',
      async (_name, failure) => {
        const { fake, handle } = setup({ verifyTimeoutMs: 50 });
        await handle('/warm-up', { 'user-agent': BROWSER });
        fake.answerWith((call) => (call.includes('/verify') ? failure() : undefined));
        const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
        expect(answer.status).toBe(503);
        expect(answer.headers['retry-after']).toBe('30');
      },
    );

    it('answers an unreadable payment header 402 without asking the API to verify it', async () => {
      const { fake, handle } = setup();
      const answer = respond(await handle('/post/1', { 'x-payment': 'not base64 json' }));
      expect(answer.status).toBe(402);
      expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({
        success: false,
        errorReason: 'invalid_payload',
      });
      expect(fake.count('POST /v1/gates/')).toBe(0);
    });

    it('honours crawler-max-price and crawler-exact-price before any payment', async () => {
      const { fake, handle } = setup();
      // Cloudflare's crawler-error codes.
      expect(
        respond(await handle('/post/1', { 'crawler-max-price': 'USD 0.005', 'x-payment': paymentV1() })).headers[
          'crawler-error'
        ],
      ).toBe('InvalidCrawlerMaxPrice');
      expect(respond(await handle('/post/1', { 'crawler-exact-price': 'USD 0.02' })).headers['crawler-error']).toBe(
        'InvalidCrawlerExactPrice',
      );
      expect(respond(await handle('/post/1', { 'crawler-max-price': 'lots' }))).toMatchObject({
        status: 400,
        headers: { 'crawler-error': 'InvalidCrawlerPriceValue' },
      });
      expect(
        respond(await handle('/post/1', { 'crawler-max-price': 'USD 0.01', 'crawler-exact-price': 'USD 0.01' })),
      ).toMatchObject({ status: 400, headers: { 'crawler-error': 'ConflictingPriceHeaders' } });
      expect(fake.count('POST /v1/gates/')).toBe(0);
    });

    it.each([
      ['crawler-max-price', 'USD 0.01', 'InvalidCrawlerMaxPrice'],
      ['crawler-exact-price', 'USD 0.01', 'InvalidCrawlerExactPrice'],
    ])(
      'holds %s to the price of the gate a payment names, not only to the path’s price now',
      async (header, stated, error) => {
        // The path costs 0.01 now; the gate named was offered at 0.02 (before the price was lowered): its payment settles 0.02.
        const { fake, handle } = setup({}, paysFor('/post/1'));
        const offer = respond(await handle('/post/1')).json;
        const dearer = {
          accepts: [{ extra: { gate_id: signGate({ ...readGate(offer.id)!, micros: 20000n }, SECRET) } }],
        };
        const answer = respond(await handle('/post/1', { [header]: stated, 'payment-signature': paymentV2(dearer) }));
        expect(answer.status).toBe(402);
        expect(answer.headers['crawler-error']).toBe(error);
        expect(fake.count('POST /v1/gates/')).toBe(0);
      },
    );

    it('takes a named gate whose price the crawler stated, even where the path costs another now', async () => {
      const { handle } = setup({}, paysFor('/post/1'));
      const offer = respond(await handle('/post/1')).json;
      const stated = { 'crawler-exact-price': 'USD 0.01', 'payment-signature': paymentV2(offer) };
      expect((await handle('/post/1', stated)).kind).toBe('pass-after-payment');
      // Offered at 0.02 before the price was lowered to today's 0.01: 0.02 is what settles, and what was stated.
      const dearer = {
        accepts: [{ extra: { gate_id: signGate({ ...readGate(offer.id)!, micros: 20000n }, SECRET) } }],
      };
      const atItsPrice = { 'crawler-exact-price': 'USD 0.02', 'payment-signature': paymentV2(dearer) };
      expect((await handle('/post/1', atItsPrice)).kind).toBe('pass-after-payment');
    });

    it('reads a page paid before (a cheaper gate, recorded only) whatever price the crawler states now', async () => {
      const { fake, handle } = setup({}, paysFor('/post/1'));
      const offer = respond(await handle('/post/1')).json;
      const cheaper = {
        accepts: [{ extra: { gate_id: signGate({ ...readGate(offer.id)!, micros: 5000n }, SECRET) } }],
      };
      const stated = { 'crawler-exact-price': 'USD 0.01', 'payment-signature': paymentV2(cheaper) };
      expect((await handle('/post/1', stated)).kind).toBe('pass-after-payment');
      expect(fake.count('POST /v1/gates/')).toBe(1);
    });

    it('answers a paid page with the headers that keep it out of shared caches, CDNs’ own included', async () => {
      const { handle } = setup({}, paysFor('/post/1'));
      const decision = await handle('/post/1', { 'x-payment': paymentV1() });
      expect(decision).toMatchObject({
        kind: 'pass-after-payment',
        headers: {
          'cache-control': 'no-store',
          'cdn-cache-control': 'no-store',
          'cloudflare-cdn-cache-control': 'no-store',
          'surrogate-control': 'no-store',
          'x-accel-expires': '0',
          'vercel-cdn-cache-control': 'no-store',
          'netlify-cdn-cache-control': 'no-store',
          'edge-control': 'no-store',
        },
      });
    });

    it('answers 503 while the publisher has no payout address: nothing can be paid, nothing is given away', async () => {
      const { fake, handle, warnings } = setup({ refreshMs: 20 });
      fake.setSite({ pay_to: null });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const answer = respond(await handle('/post/1'));
      expect([answer.status, answer.json.charged]).toEqual([503, false]);
      expect(warnings.join()).toMatch(/no payout address/);
    });
  });

  describe('hostile or malformed verify answers (the API, or whatever answers at its URL)', () => {
    const good = (gateId: string, url = '/post/1') => paid(gateId, token(url), url).body as Record<string, unknown>;
    const CHANNEL = {
      channelId: '0x' + 'c'.repeat(64),
      balance: '1000000',
      totalClaimed: '0',
      withdrawRequestedAt: 0,
      refundNonce: '0',
      chargedCumulativeAmount: '20000',
    };
    const MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch';

    /** Never the page: a response, with no token handed out. */
    async function refused(verify: (gateId: string) => FakeAnswer) {
      const { handle } = setup({}, { verify });
      const decision = await handle('/post/1', { 'x-payment': paymentV1() });
      expect(decision.kind).toBe('respond');
      const answer = respond(decision);
      expect(answer.headers['x-crawlgate-token']).toBeUndefined();
      return answer;
    }

    it.each([
      ['null', () => null],
      ['a string', () => 'paid'],
      ['a list', (id: string) => [good(id)]],
      ['an empty object', () => ({})],
      ['no token', (id: string) => ({ ...good(id), access_token: undefined })],
      ['a null token', (id: string) => ({ ...good(id), access_token: null })],
      ['an empty token', (id: string) => ({ ...good(id), access_token: '' })],
      ['a token that is a number', (id: string) => ({ ...good(id), access_token: 12345 })],
      ['a token that is an object', (id: string) => ({ ...good(id), access_token: { url: '/post/1' } })],
      ['a status other than paid', (id: string) => ({ ...good(id), status: 'settlement_pending' })],
      ['no status', (id: string) => ({ ...good(id), status: undefined })],
      ['another gate', (id: string) => ({ ...good(id), gate_id: id + 'x' })],
      ['a tx_hash that is a number', (id: string) => ({ ...good(id), tx_hash: 1 })],
      ['a payer that is an object', (id: string) => ({ ...good(id), payer: { address: '0x' } })],
      ['a price that is a number', (id: string) => ({ ...good(id), price_usd: 0.01 })],
      ['a price that breaks the header', (id: string) => ({ ...good(id), price_usd: '0.01\r\nset-cookie: a=b' })],
      ['an amount that is not atomic units', (id: string) => ({ ...good(id), amount: '-1' })],
      ['no network', (id: string) => ({ ...good(id), network: undefined })],
      ['a batch_settlement that is not an object', (id: string) => ({ ...good(id), batch_settlement: 'yes' })],
      [
        'a batch_settlement whose channel_state is missing',
        (id: string) => ({
          ...good(id),
          batch_settlement: { channel_id: CHANNEL.channelId, charged_amount: '10000', deposit_tx_hash: null },
        }),
      ],
      [
        'a batch_settlement whose channel_state has wrong types',
        (id: string) => ({
          ...good(id),
          batch_settlement: {
            channel_id: CHANNEL.channelId,
            charged_amount: '10000',
            channel_state: { ...CHANNEL, balance: 5 },
            deposit_tx_hash: null,
            deposit_amount: null,
          },
        }),
      ],
    ] as [string, (gateId: string) => unknown][])(
      'never serves a 200 with %s, answering 503 (the API may have settled: no second payment asked)',
      async (_name, body) => {
        const answer = await refused((gateId) => ({ status: 200, body: body(gateId) }));
        expect(answer.status).toBe(503);
        expect(answer.headers['retry-after']).toBeDefined();
      },
    );

    it('never serves a 200 whose well-formed token opens another path, extra fields or not', async () => {
      const answer = await refused((gateId) => ({
        status: 200,
        body: { ...good(gateId, '/post/cheap'), url: '/post/1', paths: ['/post/1'], access_token_for: '/post/1' },
      }));
      expect(answer.status).toBe(503); // paid, but not for this path: the same payment again, never a second one
    });

    it.each([
      [201, 'Created'],
      [204, 'No Content'],
      [302, 'a redirect'],
    ])('never serves a paid body under HTTP %i (%s)', async (status) => {
      const answer = await refused((gateId) => ({ status, body: good(gateId) }));
      expect([402, 503]).toContain(answer.status);
    });

    it.each([
      [402, 402],
      [404, 402],
      [409, 402],
      [429, 503], // the API's rate limit took nothing, and this payment may be settling: never "failed"
      [500, 503],
      [502, 503],
    ])('never serves a paid body with a valid token under HTTP %i: answers %i', async (status, expected) => {
      const answer = await refused((gateId) => ({ status, body: { ...good(gateId), reason: 'x', detail: 'd' } }));
      expect(answer.status).toBe(expected);
    });

    it('never serves a 202 carrying a token: the payment is pending, whatever else the body says', async () => {
      const answer = await refused((gateId) => ({
        status: 202,
        body: { ...good(gateId), status: 'settlement_pending', gate_id: gateId, tx_hash: null, detail: 'wait' },
      }));
      expect(answer.status).toBe(503);
    });

    it.each([
      ['null', () => null],
      ['no gate', () => ({ status: 'settlement_pending', tx_hash: null, detail: 'wait' })],
      [
        'another gate',
        (id: string) => ({ status: 'settlement_pending', gate_id: 'x' + id, tx_hash: null, detail: 'w' }),
      ],
      ['another status', (id: string) => ({ status: 'paid', gate_id: id, tx_hash: null, detail: 'w' })],
      [
        'a tx_hash that is a number',
        (id: string) => ({ status: 'settlement_pending', gate_id: id, tx_hash: 7, detail: 'w' }),
      ],
    ] as [string, (gateId: string) => unknown][])(
      'answers a malformed 202 (%s) 503, never the page',
      async (_name, body) => {
        const answer = await refused((gateId) => ({ status: 202, body: body(gateId) }));
        expect(answer.status).toBe(503);
      },
    );

    it.each([
      ['null', null],
      ['no reason', { detail: 'bad' }],
      ['a reason that is a number', { detail: 'bad', reason: 3 }],
      ['a detail that is a list', { detail: ['bad'], reason: 'invalid_payload' }],
    ])('answers a malformed 402 (%s) with 402 and a generic reason', async (_name, body) => {
      const answer = await refused(() => ({ status: 402, body }));
      expect(answer.status).toBe(402);
      expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({
        success: false,
        errorReason: 'unexpected_settle_error',
      });
    });

    it('passes x402’s corrective 402 on in PAYMENT-REQUIRED when its channel state is whole', async () => {
      const answer = await refused(() => ({
        status: 402,
        body: { detail: 'behind', reason: MISMATCH, channel_state: CHANNEL },
      }));
      expect(answer.status).toBe(402);
      expect(answer.headers['x-payment-response']).toBeUndefined();
      expect(decodeBase64Json(answer.headers['payment-required'])).toMatchObject({ error: MISMATCH });
    });

    it.each([
      ['a channel_state that is not an object', { channel_state: 'x' }],
      [
        'a channel_state with a total that is a number',
        { channel_state: { ...CHANNEL, chargedCumulativeAmount: 20000 } },
      ],
      ['a channel_state missing its balance', { channel_state: { ...CHANNEL, balance: undefined } }],
      ['a channel_state whose total is not atomic units', { channel_state: { ...CHANNEL, totalClaimed: '1e6' } }],
      ['a channel_state with a short channel id', { channel_state: { ...CHANNEL, channelId: '0xc' } }],
      ['a voucher_state without its signature', { channel_state: CHANNEL, voucher_state: { signedMaxClaimable: '1' } }],
      ['a voucher_state that is null', { channel_state: CHANNEL, voucher_state: null }],
    ])('refuses a corrective 402 with %s: no correction is passed on', async (_name, fields) => {
      const answer = await refused(() => ({ status: 402, body: { detail: 'behind', reason: MISMATCH, ...fields } }));
      expect(answer.status).toBe(402);
      expect(decodeBase64Json(answer.headers['payment-required'])).not.toMatchObject({ error: MISMATCH });
      expect(decodeBase64Json(answer.headers['x-payment-response'])).toMatchObject({
        success: false,
        errorReason: 'unexpected_settle_error',
      });
    });

    it('answers a 409 whose body is malformed 503, never the page (not the API’s refusal: it may have settled)', async () => {
      const answer = await refused(() => ({ status: 409, body: { detail: 42 } }));
      expect(answer.status).toBe(503);
    });
  });

  describe('when the pricing never loaded (the API down at start-up)', () => {
    it('answers a bot 503 by default (failMode closed), and serves people', async () => {
      const { fake, handle, warnings } = setup({ timeoutMs: 50 });
      fake.answerWith(() => ({ status: 500 }));
      const answer = respond(await handle('/post/1'));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('30');
      expect(await handle('/post/1', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
      expect(warnings.join()).toMatch(/never loaded; failMode closed: answering 503/);
    });

    it('opens no page with a token meanwhile: its secret, the first configured, may be one the publisher revoked since (helper-436)', async () => {
      const { fake, handle } = setup({ timeoutMs: 50, refreshMs: 20 });
      fake.answerWith(() => ({ status: 500 }));
      const answer = respond(await handle('/post/1', { authorization: `Bearer ${token('/post/1')}` }));
      expect([answer.status, answer.headers['retry-after']]).toEqual([503, '30']);
      // Once the terms load and list the secret, the same token opens its page.
      fake.answerWith(() => undefined);
      for (let i = 0; i < 100 && respond(await handle('/post/2')).status !== 402; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await handle('/post/1', { authorization: `Bearer ${token('/post/1')}` })).toEqual({ kind: 'pass' });
    });

    it('allows no crawler by default meanwhile: the stored policy it could not read may charge search engines', async () => {
      const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
      const closed = setup({ timeoutMs: 50 });
      closed.fake.answerWith(() => ({ status: 500 }));
      expect(respond(await closed.handle('/post/1', { 'user-agent': GOOGLEBOT })).status).toBe(503);
      expect(respond(await closed.handle('/post/1', { 'user-agent': 'Twitterbot/1.0' })).status).toBe(503);
      // A category the code allows too: the stored policy may charge or block a bot in it, which
      // wins over the code's category (helper-347's F1). A bot the code names is the code's alone.
      const category = setup({ timeoutMs: 50, policy: { categories: { 'search-engine': 'allow' } } });
      category.fake.answerWith(() => ({ status: 500 }));
      expect(respond(await category.handle('/post/1', { 'user-agent': GOOGLEBOT })).status).toBe(503);
      const named = setup({ timeoutMs: 50, policy: { bots: { Googlebot: 'allow' } } });
      named.fake.answerWith(() => ({ status: 500 }));
      expect(await named.handle('/post/1', { 'user-agent': GOOGLEBOT })).toEqual({ kind: 'pass' });
    });

    it('keeps its own deadline on API calls whose fetch ignores the abort signal: nobody hangs, refreshes go on', async () => {
      const fake = fakeApi();
      let hanging = true;
      const calls: string[] = [];
      const fetch = ((input: string | URL | Request, init?: RequestInit) => {
        calls.push(String(input));
        return hanging ? new Promise<Response>(() => undefined) : fake.fetch(input, init);
      }) as typeof globalThis.fetch;
      const { handle, warnings } = setup({ timeoutMs: 50, refreshMs: 20, fetch });
      expect(await handle('/post/1', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/1')).status).toBe(503);
      expect(warnings.join()).toMatch(/no answer within 50 ms/);
      hanging = false;
      for (let i = 0; i < 100 && respond(await handle('/post/1')).status !== 402; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(respond(await handle('/post/1')).status).toBe(402);
      expect(calls.length).toBeGreaterThan(1);
    });

    it('serves with failMode open and warns without secrets', async () => {
      const { fake, handle, warnings } = setup({ timeoutMs: 50, failMode: 'open' });
      fake.answerWith(() => ({ status: 500 }));
      expect(await handle('/post/1', { authorization: `Bearer ${token('/post/2')}` })).toEqual({ kind: 'pass' });
      expect(warnings.join()).toMatch(/never loaded; failMode open: serving/);
      expect(warnings.join()).not.toMatch(new RegExp([SITE_TOKEN, SECRET, token('/post/2').split('.')[0]].join('|')));
    });

    it('answers 503 with failMode closed, also to a misconfigured site (401)', async () => {
      const { fake, handle } = setup({ failMode: 'closed' });
      fake.answerWith(() => ({ status: 401, body: { detail: 'Invalid site token' } }));
      const answer = respond(await handle('/post/1'));
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('30');
    });

    it('answers 503 with failMode closed when GET /v1/site answers 200 with a body that is not a site offer', async () => {
      const { fake, handle, warnings } = setup({ failMode: 'closed' });
      fake.answerWith((call) =>
        call === 'GET /v1/site' ? { status: 200, body: { site_id: FAKE_SITE_ID } } : undefined,
      );
      expect(respond(await handle('/post/1')).status).toBe(503);
      expect(warnings.join()).toMatch(/GET \/v1\/site: HTTP 200 with a body that is not the API's answer/);
    });

    it('keeps the last pricing when a refresh brings a free site with one field of the wrong type', async () => {
      const { fake, handle } = setup({ refreshMs: 20 });
      await handle('/warm-up', { 'user-agent': BROWSER });
      fake.answerWith((call) =>
        call === 'GET /v1/site'
          ? { status: 200, body: { ...SITE_FREE, pricing_version: 99, chain_id: '31337' } }
          : undefined,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(respond(await handle('/post/1')).status).toBe(402);
    });

    it('charges once a later refresh loads the pricing', async () => {
      const { fake, handle } = setup({ refreshMs: 20 });
      fake.answerWith(() => ({ status: 502 }));
      await handle('/warm-up');
      fake.answerWith(undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(respond(await handle('/post/1')).status).toBe(402);
    });
  });

  describe('/.well-known/pay.json', () => {
    it('publishes the site offer from the loaded terms, with no API call of its own', async () => {
      const { fake, handle } = setup();
      const answer = respond(await handle('/.well-known/pay.json', { 'user-agent': BROWSER }));
      expect(answer.status).toBe(200);
      expect(answer.headers['cache-control']).toBe('public, max-age=60');
      expect(answer.json.site).toEqual({ id: FAKE_SITE_ID, domain: 'example.com' });
      await handle('/.well-known/pay.json');
      expect(fake.calls).toEqual(['GET /v1/site']);
    });

    it('follows the failMode while nothing has loaded', async () => {
      const open = setup({ failMode: 'open' });
      open.fake.answerWith(() => ({ status: 502 }));
      expect(await open.handle('/.well-known/pay.json')).toEqual({ kind: 'pass' });
      const closed = setup({ failMode: 'closed' });
      closed.fake.answerWith(() => ({ status: 502 }));
      expect(respond(await closed.handle('/.well-known/pay.json')).status).toBe(503);
    });
  });
});

/** A sign-in proof answering this site's challenge for `path` (its signature is the API's to judge). */
const proofFor = (path: string) =>
  encodeBase64Json({
    address: '0x' + '1'.repeat(40),
    signature: '0x' + '2'.repeat(130),
    nonce: signSiwxNonce({ siteId: FAKE_SITE_ID, path }, Math.floor(Date.now() / 1000) + 300, SECRET),
    domain: 'example.com',
    uri: `https://example.com${path}`,
    chainId: 'eip155:8453',
  });

describe('a sign-in the API cannot check', () => {
  it('answers 503, serving nothing and taking no payment the request also carries: the wallet may have paid already', async () => {
    const { fake, handle, gate } = setup({}, paysFor('/post/1'));
    fake.answerWith((call) => (call === 'POST /v1/access-tokens/siwx' ? { status: 429 } : undefined));
    const alone = await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1') });
    expect(respond(alone).status).toBe(503);
    const withPayment = await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-payment': paymentV1() });
    expect(respond(withPayment).status).toBe(503);
    expect(fake.calls.filter((call) => call.endsWith('/verify'))).toHaveLength(0);
    // Not a visit's outcome: no re-access is counted for a sign-in nobody checked.
    await gate.close();
    const crawlers = (fake.reports[0] as { crawlers?: { action: string }[] } | undefined)?.crawlers ?? [];
    expect(crawlers.filter((count) => count.action === 'token')).toEqual([]);
  });
});

describe('API calls a crawler can start (payments and sign-ins), held by a slow API', () => {
  /** Holds every verify and sign-in call open until released; the site's terms still load. */
  function holdingApi(options: Partial<CrawlgateOptions>) {
    const setUp = setup(options, paysFor('/post/1'));
    const held: (() => void)[] = [];
    setUp.fake.answerWith((call) =>
      call.endsWith('/verify') || call.endsWith('/siwx')
        ? new Promise<undefined>((resolve) => held.push(() => resolve(undefined)))
        : undefined,
    );
    const started = () => setUp.fake.calls.filter((call) => call.endsWith('/verify') || call.endsWith('/siwx')).length;
    /** Answers the calls held, and every later one at once. */
    const release = () => {
      setUp.fake.answerWith(undefined);
      held.splice(0).forEach((answer) => answer());
    };
    return { ...setUp, release, started };
  }
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('starts at most maxApiCallsInFlight at once: a payment past them gets 503 at once, nothing sent, nothing charged', async () => {
    const { handle, release, started } = holdingApi({ maxApiCallsInFlight: 2 });
    await handle('/warm-up', { 'user-agent': BROWSER });
    const first = [1, 2].map(() => handle('/post/1', { 'x-payment': paymentV1() }));
    await until(() => started() === 2);
    const past = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
    expect(past.status).toBe(503);
    expect(past.headers['retry-after']).toBeDefined();
    expect(past.json.detail).toMatch(/nothing was charged/);
    // Said in a field a payer reads (GateNotCharging): this request sent nothing on.
    expect(past.json.charged).toBe(false);
    // No failed settlement either: an earlier send of this very payment may be settling (a pending
    // answer resent into a full queue), and a payer told it failed would forget it and pay again.
    expect(past.headers['x-payment-response']).toBeUndefined();
    const pastV2 = respond(
      await handle('/post/1', { 'payment-signature': paymentV2(respond(await handle('/post/1')).json) }),
    );
    expect(pastV2.status).toBe(503);
    expect(pastV2.headers['payment-response']).toBeUndefined();
    // A sign-in waits for a slot as a payment does: 503, the wallet may have paid for this page.
    expect(respond(await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1') })).status).toBe(503);
    expect(started()).toBe(2);
    release();
    expect((await Promise.all(first)).map((decision) => decision.kind)).toEqual([
      'pass-after-payment',
      'pass-after-payment',
    ]);
    // Slots given back: the next payment reaches the API.
    expect((await handle('/post/1', { 'x-payment': paymentV1() })).kind).toBe('pass-after-payment');
    expect(started()).toBe(3);
  });

  it('keeps the default cap whatever a flood of unpaid payment headers asks: one new call per slot, people still pass', async () => {
    const { handle, release, started, warnings } = holdingApi({});
    await handle('/warm-up', { 'user-agent': BROWSER });
    const flood = Array.from({ length: 300 }, () => handle('/post/1', { 'x-payment': paymentV1() }));
    await until(() => started() >= 256);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started()).toBe(256);
    expect(await handle('/post/2', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
    release();
    const kinds = (await Promise.all(flood)).map((decision) =>
      decision.kind === 'respond' ? decision.status : decision.kind,
    );
    expect(kinds.filter((kind) => kind === 503)).toHaveLength(300 - 256);
    // Said once, not once per refused payment: a flood must not become a flood of log lines.
    expect(warnings.filter((warning) => warning.includes('maxApiCallsInFlight'))).toHaveLength(1);
  });

  it('refuses a bound that is not a whole number of at least 1 (NaN would bound nothing)', () => {
    for (const maxApiCallsInFlight of [0, -1, 1.5, Number.NaN, Infinity])
      expect(() => setup({ maxApiCallsInFlight })).toThrow(/maxApiCallsInFlight/);
  });
});

describe('terms the API has not refreshed for five minutes', () => {
  // A secret revoked, a price raised or a bot blocked meanwhile would be unknown to the gate.
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('open no page with a token and price no bot, whatever failMode says, until a refresh succeeds; people pass', async () => {
    for (const failMode of ['closed', 'open'] as const) {
      const { fake, handle, gate } = setup({ refreshMs: 30_000, failMode });
      await gate.ready();
      const opened = token('/post/1');
      expect(await handle('/post/1', { 'x-crawlgate-token': opened })).toEqual({ kind: 'pass' });
      fake.answerWith((call) => (call === 'GET /v1/site' ? { status: 503 } : undefined));
      await jest.advanceTimersByTimeAsync(4 * 60_000);
      expect(await handle('/post/1', { 'x-crawlgate-token': opened })).toEqual({ kind: 'pass' });
      expect(respond(await handle('/post/2')).status).toBe(402);

      await jest.advanceTimersByTimeAsync(90_000);
      for (const headers of [{ 'x-crawlgate-token': opened }, {}]) {
        const answer = respond(await handle('/post/1', headers));
        expect([answer.status, answer.headers['retry-after']]).toEqual([503, '30']);
      }
      expect(await handle('/post/1', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });

      fake.answerWith(() => undefined);
      await jest.advanceTimersByTimeAsync(30_000);
      expect(await handle('/post/1', { 'x-crawlgate-token': opened })).toEqual({ kind: 'pass' });
      await gate.close();
    }
  });

  it('serve a payment the API confirmed after they lapsed: it was taken under terms that held', async () => {
    const issued = token('/post/1');
    const { fake, handle, gate } = setup({ refreshMs: 30_000 }, { verify: (id) => paid(id, issued, '/post/1') });
    await gate.ready();
    const offer = respond(await handle('/post/1')).json;
    fake.answerWith(async (call) => {
      if (call === 'GET /v1/site') return { status: 503 };
      // The settlement takes 25 s, within the verify timeout; the terms lapse meanwhile.
      if (call.endsWith('/verify')) await new Promise((resolve) => setTimeout(resolve, 25_000));
      return undefined;
    });
    await jest.advanceTimersByTimeAsync(4 * 60_000 + 50_000);
    const paying = handle('/post/1', { 'payment-signature': paymentV2(offer) });
    await jest.advanceTimersByTimeAsync(25_000);
    expect(await paying).toMatchObject({ kind: 'pass-after-payment', headers: { 'x-crawlgate-token': issued } });
    await gate.close();
  });

  it('serve a sign-in the API accepted after they lapsed, and take no payment the request also carries', async () => {
    const issued = token('/post/1');
    const { fake, handle, gate } = setup({ refreshMs: 30_000 }, paysFor('/post/1'));
    await gate.ready();
    fake.answerWith(async (call) => {
      if (call === 'GET /v1/site') return { status: 503 };
      if (call !== 'POST /v1/access-tokens/siwx') return undefined;
      // The sign-in takes 2 s; the terms lapse meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const access = { access_token: issued, expires_at: new Date(Date.now() + 1_800_000).toISOString() };
      return { status: 200, body: { ...access, url: '/post/1', payer: '0x' + '1'.repeat(40) } };
    });
    await jest.advanceTimersByTimeAsync(4 * 60_000 + 59_000);
    const reading = handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-payment': paymentV1() });
    await jest.advanceTimersByTimeAsync(5_000);
    expect(await reading).toMatchObject({ kind: 'pass-after-payment', headers: { 'x-crawlgate-token': issued } });
    expect(fake.calls.filter((call) => call.endsWith('/verify'))).toEqual([]);
    await gate.close();
  });

  it('never serve a bot that waited for its address check while they lapsed, once they load again, failMode open or not (helper-360)', async () => {
    // The decision went on with the terms read before the wait: none, as they had lapsed. With
    // the terms loaded again by then, that read as "never loaded", which failMode open serves.
    const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    for (const failMode of ['open', 'closed'] as const) {
      const { crawlerIps, release: releaseRanges } = heldCrawlerRanges();
      const { fake, handle, gate } = setup({
        refreshMs: 30_000,
        failMode,
        policy: { bots: { Googlebot: 'allow' } },
        crawlerIps,
      });
      await gate.ready();
      fake.answerWith((call) => (call === 'GET /v1/site' ? { status: 503 } : undefined));
      await jest.advanceTimersByTimeAsync(6 * 60_000);
      // 10.0.0.1 is none of Google's addresses: this Googlebot pays.
      const waiting = handle('/post/1', { 'user-agent': GOOGLEBOT });
      fake.answerWith(() => undefined);
      await jest.advanceTimersByTimeAsync(30_000);
      expect(respond(await handle('/post/2')).status).toBe(402); // loaded again
      releaseRanges();
      expect(respond(await waiting).status).toBe(402);
      await gate.close();
    }
  });

  it('keep charging a bot the stored policy charged by name, where the code allows its category', async () => {
    const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const { fake, handle, gate } = setup({ refreshMs: 30_000, policy: { categories: { 'search-engine': 'allow' } } });
    fake.setSite({
      bot_policy: {
        version: 1,
        categories: {},
        bots: { Googlebot: 'charge' },
        require_signature: { categories: [], bots: [] },
      },
    } as never);
    await gate.ready();
    expect(respond(await handle('/post/1', { 'user-agent': GOOGLEBOT })).status).toBe(402);
    fake.answerWith((call) => (call === 'GET /v1/site' ? { status: 503 } : undefined));
    await jest.advanceTimersByTimeAsync(5 * 60_000 + 30_000);
    expect(respond(await handle('/post/1', { 'user-agent': GOOGLEBOT })).status).toBe(503);
    await gate.close();
  });
});

describe('a path no access token could carry', () => {
  it('is answered 414 to a bot that must pay, before any rule is read: even a free one is not sold to it', async () => {
    const { handle } = setup();
    const long = '/free/' + 'a'.repeat(3000);
    const answer = respond(await handle(long));
    expect([answer.status, answer.json.detail]).toEqual([414, 'Path longer than 2048 bytes (UTF-8, as JSON)']);
    expect(respond(await handle('/post/' + 'a'.repeat(100_000))).status).toBe(414);
    // People, and bots the policy allows, are not priced: they pass as before.
    expect(await handle(long, { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
    expect(await handle('/free/short')).toEqual({ kind: 'pass' });
  });
});

describe('a settled payment sent again', () => {
  it('is counted paid once, with its revenue; sent again it is a re-read of a paid page, with none', async () => {
    const issued = token('/post/1');
    const { fake, handle, gate } = setup({}, { verify: (gateId) => paid(gateId, issued, '/post/1') });
    const offer = respond(await handle('/post/1')).json;
    const payment = paymentV2(offer);
    for (let i = 0; i < 3; i++)
      expect((await handle('/post/1', { 'payment-signature': payment })).kind).toBe('pass-after-payment');
    await gate.close();
    const crawlers = (fake.reports[0] as { crawlers: { action: string; requests: number; revenue_micros: string }[] })
      .crawlers;
    expect(
      crawlers
        .filter(({ action }) => action !== 'charged')
        .map(({ action, requests, revenue_micros }) => [action, requests, revenue_micros]),
    ).toEqual([
      ['paid', 1, '10000'],
      ['token', 2, '0'],
    ]);
  });
});

describe("a payment the API's rate limit refuses (429)", () => {
  const throttled = (retryAfter?: string): FakeAnswer => ({
    status: 429,
    ...(retryAfter === undefined ? {} : { headers: { 'retry-after': retryAfter } }),
    body: { detail: 'ThrottlerException: Too Many Requests' },
  });

  it("is answered 503 with the API's Retry-After, nothing charged, no failed settlement: never a 402 asking to pay again", async () => {
    // The same payment resent after a "pending" 503 shares the per-gate 429 bucket with the payer's
    // polls of verify_url: it may be settling, and a payer told it failed signs a second one.
    let calls = 0;
    const { handle, warnings } = setup({}, { verify: (gateId) => (++calls === 1 ? pending(gateId) : throttled('30')) });
    const payment = paymentV2(respond(await handle('/post/1')).json);
    expect(respond(await handle('/post/1', { 'payment-signature': payment })).status).toBe(503); // pending
    const resent = respond(await handle('/post/1', { 'payment-signature': payment }));
    expect({ status: resent.status, retryAfter: resent.headers['retry-after'], charged: resent.json.charged }).toEqual({
      status: 503,
      retryAfter: '30',
      charged: false,
    });
    expect(resent.headers['payment-response']).toBeUndefined();
    expect(resent.headers['payment-required']).toBeUndefined();
    expect(warnings.some((warning) => warning.includes('429'))).toBe(true);
    // An x402 v1 payment alike.
    const v1 = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
    expect(v1.status).toBe(503);
    expect(v1.headers['x-payment-response']).toBeUndefined();
  });

  it.each([
    ['3600', '60'],
    [undefined, '5'],
    ['soon', '5'],
  ])('bounds its Retry-After as a payment not charged (API: %s → %s)', async (theirs, ours) => {
    const { handle } = setup({}, { verify: () => throttled(theirs) });
    const answer = respond(await handle('/post/1', { 'x-payment': paymentV1() }));
    expect({ status: answer.status, retryAfter: answer.headers['retry-after'] }).toEqual({
      status: 503,
      retryAfter: ours,
    });
  });
});

describe('the paid tokens a gate remembers', () => {
  it('forget the least recently served first: a payment sent again and again stays a re-read past the bound', async () => {
    // Cleared at the bound, every payment paid just before was counted paid, with revenue, once more.
    let answered = token('/post/1', { gateId: 'first' });
    const { fake, handle, gate } = setup({}, { verify: (gateId) => paid(gateId, answered, '/post/1') });
    const payment = paymentV2(respond(await handle('/post/1')).json);
    const serve = async (issued: string) => {
      answered = issued;
      expect((await handle('/post/1', { 'payment-signature': payment })).kind).toBe('pass-after-payment');
    };
    const first = answered;
    const others = Array.from({ length: 4_200 }, (_, index) => token('/post/1', { gateId: `other-${index}` }));
    await serve(first);
    for (const issued of others.slice(0, 4_000)) await serve(issued);
    await serve(first); // a re-read, and now the most recently served
    for (const issued of others.slice(4_000)) await serve(issued); // past the bound of 4,096
    await serve(first);
    await serve(others[4_100]);
    await gate.close();
    const counts = fake.reports.flatMap(
      (report) => (report as { crawlers: { action: string; requests: number }[] }).crawlers,
    );
    const sum = (action: string) =>
      counts.filter((count) => count.action === action).reduce((total, count) => total + count.requests, 0);
    expect([sum('paid'), sum('token')]).toEqual([1 + 4_200, 3]);
  });
});

describe('a payment of a gate offered before the price rose', () => {
  it('is counted with the revenue it paid, not today’s price', async () => {
    const { fake, handle, gate } = setup({}, { verify: (gateId) => paid(gateId, token('/post/1'), '/post/1') });
    const offer = respond(await handle('/post/1')).json;
    const cheaper = { accepts: [{ extra: { gate_id: signGate({ ...readGate(offer.id)!, micros: 4000n }, SECRET) } }] };
    // The API answers for the payment recorded before the rise: 0.004, as the gate offered.
    fake.answerWith((call, body) => {
      if (!call.endsWith('/verify') || !body.recorded_only) return undefined;
      const answer = paid(decodeURIComponent(call.split('/')[3]), token('/post/1'), '/post/1');
      return { ...answer, body: { ...(answer.body as object), amount: '4000', price_usd: '0.004' } };
    });
    expect((await handle('/post/1', { 'payment-signature': paymentV2(cheaper) })).kind).toBe('pass-after-payment');
    await gate.close();
    const crawlers = (fake.reports[0] as { crawlers: { action: string; revenue_micros: string }[] }).crawlers;
    expect(crawlers.filter(({ action }) => action === 'paid').map((count) => count.revenue_micros)).toEqual(['4000']);
  });
});

describe('a sign-in behind a proxy', () => {
  it('tells the API the visitor’s address that crawlerIps.clientIp gives, not the proxy’s: its sign-in limit counts per address', async () => {
    const { fake, handle } = setup({
      crawlerIps: {
        clientIp: (request) => request.headers['x-real-ip'] as string | undefined,
        // No operator's list fetched, no name looked up: the address is what is tested.
        fetch: () => Promise.reject(new Error('offline')),
        reverseDns: false,
      },
    });
    const sent: unknown[] = [];
    fake.answerWith((call, body) => {
      if (call === 'POST /v1/access-tokens/siwx') sent.push(body.client_ip);
      return undefined;
    });
    await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-real-ip': '203.0.113.9' }, '127.0.0.1');
    await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-real-ip': '198.51.100.7' }, '127.0.0.1');
    // A proxy that writes the port too: the address alone. Not an address at all: the socket's, which the API takes.
    await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-real-ip': '203.0.113.9:4711' }, '10.0.0.2');
    await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-real-ip': '[2001:db8::7]:443' }, '10.0.0.2');
    await handle('/post/1', { 'sign-in-with-x': proofFor('/post/1'), 'x-real-ip': 'unknown' }, '10.0.0.2');
    expect(sent).toEqual(['203.0.113.9', '198.51.100.7', '203.0.113.9', '2001:db8::7', '10.0.0.2']);
  });
});

describe('a sign-in the API accepted', () => {
  it('serves the page with the token and counts it as a re-access, not as a new paid visit with revenue', async () => {
    const { fake, handle, gate } = setup();
    const issued = token('/post/1');
    fake.answerWith((call) =>
      call === 'POST /v1/access-tokens/siwx'
        ? {
            status: 200,
            body: {
              access_token: issued,
              expires_at: new Date(Date.now() + 1_800_000).toISOString(),
              url: '/post/1',
              payer: '0x' + '1'.repeat(40),
            },
          }
        : undefined,
    );
    const proof = proofFor('/post/1');
    for (let i = 0; i < 3; i++)
      expect(await handle('/post/1', { 'sign-in-with-x': proof })).toMatchObject({
        kind: 'pass-after-payment',
        headers: { 'x-crawlgate-token': issued },
      });
    await gate.close();
    const crawlers = (fake.reports[0] as { crawlers: { action: string; requests: number; revenue_micros: string }[] })
      .crawlers;
    expect(crawlers.map(({ action, requests, revenue_micros }) => [action, requests, revenue_micros])).toEqual([
      ['token', 3, '0'],
    ]);
  });
});

describe('a target a router may read as another path', () => {
  // Read whole, "/premium/x;/../../cheap/t" is /cheap/t; a router cutting at ";" serves /premium/x.
  const AMBIGUOUS = ['/premium/x;/../../cheap/t', '/premium/x;/%2e%2e/%2e%2e/cheap/t', '/cheap/t;x'];

  it('is opened by no token, not even one for the path it reads as whole', async () => {
    const { handle } = setup();
    expect(await handle('/cheap/t', { 'x-crawlgate-token': token('/cheap/t') })).toEqual({ kind: 'pass' });
    for (const url of AMBIGUOUS)
      expect({ url, decision: (await handle(url, { 'x-crawlgate-token': token('/cheap/t') })).kind }).toEqual({
        url,
        decision: 'respond',
      });
  });

  it('is re-opened by no sign-in proof: the API is not even asked', async () => {
    const { fake, handle } = setup();
    const asked = () => fake.calls.filter((call) => call === 'POST /v1/access-tokens/siwx').length;
    const proof = proofFor('/cheap/t');
    await handle('/cheap/t', { 'sign-in-with-x': proof });
    expect(asked()).toBe(1); // a plain path asks the API (the fake refuses: 402)
    for (const url of AMBIGUOUS) {
      const decision = await handle(url, { 'sign-in-with-x': proof });
      expect({ url, status: decision.kind === 'respond' && decision.status }).toEqual({ url, status: 402 });
    }
    expect(asked()).toBe(1);
  });
});

describe('a spelling a Windows server serves as another file', () => {
  // Win32 drops a trailing "." or space (IIS, nginx on Windows), NTFS reads "::$DATA" as the file
  // itself and "::$INDEX_ALLOCATION" as its folder, and a server in C ends a name at a NUL: each is
  // report.html there.
  const SPELLINGS = [
    '/docs/report.html.',
    '/docs/report.html%20',
    '/docs/report.html%00',
    '/docs/report.html%00/x',
    '/docs/report.html::$DATA',
    '/docs::$INDEX_ALLOCATION/report.html',
  ];

  async function docsSite() {
    const site = setup();
    site.fake.setSite({ default_price_usd: '0', rules: [{ path: '/docs/*.html', price_usd: '0.5' }] });
    await site.gate.ready();
    return site;
  }

  it('charges a bot report.html’s price, never 0, and lets a person through', async () => {
    const { handle } = await docsSite();
    expect(respond(await handle('/docs/report.html')).json.price_usd).toBe('0.5');
    for (const url of SPELLINGS) {
      const answer = respond(await handle(url));
      expect({ url, status: answer.status, price: answer.json.price_usd }).toEqual({ url, status: 402, price: '0.5' });
      expect(await handle(url, { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
    }
    expect(await handle('/docs/notes.txt')).toEqual({ kind: 'pass' });
    expect(await handle('/robots.txt')).toEqual({ kind: 'pass' });
  });

  it('is opened by no token for the file it names', async () => {
    const { handle } = await docsSite();
    expect(await handle('/docs/report.html', { 'x-crawlgate-token': token('/docs/report.html') })).toEqual({
      kind: 'pass',
    });
    for (const url of SPELLINGS)
      expect({
        url,
        status: respond(await handle(url, { 'x-crawlgate-token': token('/docs/report.html') })).status,
      }).toEqual({
        url,
        status: 402,
      });
  });
});
