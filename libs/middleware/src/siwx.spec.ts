import { encodeBase64Json, signSiwxNonce, verifySiwxNonce, type SiteOffer, type SiwxAccess } from '@crawlgate/core';
import { CrawlgateApiError, type ApiClient } from './api-client';
import { createSiwxGate } from './siwx';

/* One module: the API client is a stand-in here; siwx.spec.ts under test/ runs the real API. */
const SECRETS = ['cgsec_s'];
const access: SiwxAccess = {
  access_token: 'tok',
  expires_at: '2026-11-23T17:00:00.000Z',
  url: '/a',
  payer: '0x' + '1'.repeat(40),
};

function gate(
  answer: () => Promise<SiwxAccess | null>,
  opens = (token: string, path: string) => token === 'tok' && path === '/a',
) {
  const calls: unknown[] = [];
  const warnings: string[] = [];
  const api = { siwx: async (request: unknown) => (calls.push(request), answer()) } as unknown as ApiClient;
  const siwx = createSiwxGate({
    api,
    siteId: 'site-1',
    tokenOpens: opens,
    warn: (message) => warnings.push(message),
  });
  return { siwx, calls, warnings };
}

/** A proof's shape answering a challenge of `path` (its signature is the API's to check). */
const proofFor = (path: string, secret = 'cgsec_s', exp = Math.floor(Date.now() / 1000) + 300) =>
  encodeBase64Json({
    address: '0x' + '1'.repeat(40),
    signature: '0x' + '2'.repeat(130),
    nonce: signSiwxNonce({ siteId: 'site-1', path }, exp, secret),
    domain: 'blog.example.com',
    uri: `https://blog.example.com${path}`,
    chainId: 'eip155:8453',
  });
const proof = proofFor('/a');

describe('createSiwxGate', () => {
  it('challenges with a nonce of this site and path, for five minutes', () => {
    const { siwx } = gate(async () => access);
    const site = { domain: 'blog.example.com', caip2: 'eip155:8453' } as SiteOffer;
    const challenge = siwx.challenge(site, '/a', 1_800_000_000, 'cgsec_s')['sign-in-with-x'] as {
      info: { nonce: string; uri: string; expirationTime: string };
    };
    expect(challenge.info.uri).toBe('https://blog.example.com/a');
    expect(challenge.info.expirationTime).toBe(new Date(1_800_000_300_000).toISOString());
    expect(verifySiwxNonce(challenge.info.nonce, { siteId: 'site-1', path: '/a' }, ['cgsec_s'], 1_800_000_000)).toEqual(
      { valid: true, exp: 1_800_000_300 },
    );
  });

  it('passes with the token when the API accepts and the token opens the path', async () => {
    const { siwx, calls } = gate(async () => access);
    expect(await siwx.reaccess({ 'sign-in-with-x': proof }, '/a', SECRETS)).toEqual({
      kind: 'pass-after-payment',
      headers: expect.objectContaining({ 'x-crawlgate-token': 'tok', 'cache-control': 'no-store' }),
    });
    expect(calls).toEqual([{ proof, url: '/a' }]);
  });

  it('tells the API the visitor’s address, which the API counts sign-ins by', async () => {
    const { siwx, calls } = gate(async () => access);
    await siwx.reaccess({ 'sign-in-with-x': proof }, '/a', SECRETS, '203.0.113.9');
    expect(calls).toEqual([{ proof, url: '/a', client_ip: '203.0.113.9' }]);
  });

  it('asks nothing without a header, or with one too long to be a proof', async () => {
    const { siwx, calls } = gate(async () => access);
    expect(await siwx.reaccess({}, '/a', SECRETS)).toBeUndefined();
    expect(await siwx.reaccess({ 'sign-in-with-x': 'A'.repeat(8193) }, '/a', SECRETS)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('asks nothing for a proof that answers no challenge of this site for this path: the API budget is the payers’', async () => {
    const { siwx, calls } = gate(async () => access);
    for (const junk of [
      'x',
      encodeBase64Json({ address: '0x' + '1'.repeat(40) }),
      proofFor('/b'),
      proofFor('/a', 'cgsec_another_site'),
      proofFor('/a', 'cgsec_s', Math.floor(Date.now() / 1000) - 1),
    ])
      expect(await siwx.reaccess({ 'sign-in-with-x': junk }, '/a', SECRETS)).toBeUndefined();
    expect(calls).toEqual([]);
    // A challenge signed with a secret being rotated out still answers.
    const rotating = createSiwxGate({
      api: { siwx: async () => access } as unknown as ApiClient,
      siteId: 'site-1',
      tokenOpens: () => true,
      warn: () => undefined,
    });
    expect(await rotating.reaccess({ 'sign-in-with-x': proof }, '/a', ['cgsec_new', 'cgsec_s'])).toMatchObject({
      kind: 'pass-after-payment',
    });
  });

  it('falls through to the 402 on a refusal', async () => {
    expect(await gate(async () => null).siwx.reaccess({ 'sign-in-with-x': proof }, '/a', SECRETS)).toBeUndefined();
  });

  it('answers 503, never the 402 nor a payment, when the API confirms a token that does not open this path', async () => {
    // The wallet paid for this page (a secret rotated meanwhile, say): a 402 would have it pay again.
    const elsewhere = gate(async () => access);
    const decision = await elsewhere.siwx.reaccess({ 'sign-in-with-x': proofFor('/b') }, '/b', SECRETS);
    expect(decision).toMatchObject({ kind: 'respond', status: 503, headers: { 'retry-after': expect.any(String) } });
    expect(decision).not.toHaveProperty('headers.x-crawlgate-token');
    expect(elsewhere.warnings).toEqual([expect.stringContaining('does not open /b')]);
  });

  it.each([
    ['no answer in time', new CrawlgateApiError('POST /v1/access-tokens/siwx: no answer within 3000 ms')],
    [
      'the route’s limit spent (by junk proofs, say)',
      new CrawlgateApiError('POST /v1/access-tokens/siwx: unexpected HTTP 429', 429),
    ],
    ['a server error', new CrawlgateApiError('POST /v1/access-tokens/siwx: unexpected HTTP 500', 500)],
  ])(
    'answers 503 with Retry-After, not 402, when the sign-in cannot be checked (%s): a wallet that paid must not pay again',
    async (_case, error) => {
      const failing = gate(async () => Promise.reject(error));
      const decision = await failing.siwx.reaccess({ 'sign-in-with-x': proof }, '/a', SECRETS);
      expect(decision).toMatchObject({ kind: 'respond', status: 503, headers: { 'retry-after': expect.any(String) } });
      expect(decision).not.toHaveProperty('headers.x-crawlgate-token');
      // Nothing was sent on, a payment with the sign-in neither (GateNotCharging).
      expect(JSON.parse((decision as { body: string }).body)).toMatchObject({ charged: false });
      expect(failing.warnings).toEqual([expect.stringContaining(error.message)]);
    },
  );

  it('says, when the API’s sign-in limit answers for a private or loopback address, that a proxy may be sharing it', async () => {
    // Behind a proxy the framework does not trust, every visitor's sign-ins count as the proxy's:
    // junk sign-ins then hold off every paying visitor's, and new payers' too.
    const limited = new CrawlgateApiError('POST /v1/access-tokens/siwx: unexpected HTTP 429', 429);
    const behindProxy = gate(async () => Promise.reject(limited));
    for (const ip of ['10.0.0.7', '10.0.0.7', '203.0.113.9'])
      await behindProxy.siwx.reaccess({ 'sign-in-with-x': proof }, '/a', SECRETS, ip);
    expect(behindProxy.warnings.filter((warning) => /private or loopback address/.test(warning))).toEqual([
      expect.stringMatching(
        /limited sign-ins from 10\.0\.0\.7, a private or loopback address: if a proxy.*trust proxy/,
      ),
    ]);
  });

  it('lets a bug throw (the gate answers 503), never pass', async () => {
    await expect(
      gate(async () => Promise.reject(new TypeError('bug'))).siwx.reaccess({ 'sign-in-with-x': proof }, '/a', SECRETS),
    ).rejects.toThrow('bug');
  });
});
