import { createWebBotAuthSigner, generateEd25519Jwk, jwkThumbprint } from '@crawlgate/core';
import { startAgentDirectory, type AgentDirectory } from '../../testing/agent-directory';
import { handSigned, type HandSigned } from '../../testing/signing';
import { lowerCaseHeaders } from '../request-headers';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { createWebBotAuth, type WebBotAuthOptions } from './index';
import { redisReplayStore } from './replay-store';
import { claimsSignature, requestView, siteAuthority } from './verify-request';

let agent: AgentDirectory;
beforeEach(async () => {
  agent = await startAgentDirectory();
});
afterEach(() => agent.close());

const SITE = 'https://site.example/articles/1';
const verifier = (options: WebBotAuthOptions = {}, siteDomain?: () => string | undefined) =>
  createWebBotAuth(
    { allowLoopbackDirectories: true, directoryTimeoutMs: 10_000, hosts: ['site.example'], ...options },
    siteDomain,
  );

/** What the gate sees of a request to SITE sent with `headers` (Node's form: a path and a Host header). */
function check(headers: Record<string, string>, web = verifier(), url = '/articles/1', host = 'site.example') {
  return web.check({ method: 'GET', url }, lowerCaseHeaders({ host, ...headers }));
}

const signed = (options: Partial<HandSigned> = {}) =>
  handSigned({ key: agent.key, agent: agent.origin, url: SITE, ...options });
const now = () => Math.floor(Date.now() / 1000);

describe('web bot auth verification', () => {
  it('verifies what the core signer sends, naming the agent origin and the key', async () => {
    const signer = createWebBotAuthSigner({ key: agent.key, signatureAgent: agent.origin, allowLoopbackAgent: true });
    const headers = await signer.sign({ method: 'GET', url: SITE, headers: new Headers() });
    const answer = await check(headers);
    expect(answer).toEqual({
      status: 'verified',
      agent: agent.origin,
      keyid: jwkThumbprint(agent.key),
      covered: new Set(['@authority', '@method', '@path', 'signature-agent;key=sig1']),
    });
  });

  it('verifies the legacy Signature-Agent string form, signed whole (as ChatGPT agent sends it)', async () => {
    const headers = await signed({
      agentHeader: `"${agent.origin}"`,
      components: '("@authority" "@method" "@path" "signature-agent")',
    });
    expect((await check(headers)).status).toBe('verified');
  });

  it('reads the authority from an absolute URL (the fetch adapter) as from a Host header (Node)', async () => {
    const headers = await signed();
    expect((await check(headers, verifier(), SITE, 'ignored.example')).status).toBe('verified');
    expect((await check(await signed(), verifier(), '/articles/1', 'SITE.example:443')).status).toBe('verified');
  });

  it.each<[string, () => Promise<Record<string, string>>, RegExp]>([
    ['expired', () => signed({ created: now() - 600, expires: now() - 120 }), /expired/],
    ['created in the future', () => signed({ created: now() + 300, expires: now() + 360 }), /future/],
    ['valid for too long', () => signed({ created: now(), expires: now() + 7200 }), /longer than 3600/],
    ['expiring before it was created', () => signed({ created: now(), expires: now() - 1 }), /not after created/],
    [
      'without created',
      () => signed({ params: `;expires=${now() + 60};keyid="${jwkThumbprint(agent.key)}";tag="web-bot-auth"` }),
      /created and expires/,
    ],
    [
      'without expires',
      () => signed({ params: `;created=${now()};keyid="${jwkThumbprint(agent.key)}";tag="web-bot-auth"` }),
      /created and expires/,
    ],
    ['without keyid', () => signed({ params: `;created=${now()};expires=${now() + 60};tag="web-bot-auth"` }), /keyid/],
    [
      'with another algorithm',
      () =>
        signed({
          params: `;created=${now()};expires=${now() + 60};keyid="${jwkThumbprint(agent.key)}";alg="rsa-pss-sha512";tag="web-bot-auth"`,
        }),
      /ed25519/,
    ],
    [
      'with another tag',
      () =>
        signed({ params: `;created=${now()};expires=${now() + 60};keyid="${jwkThumbprint(agent.key)}";tag="other"` }),
      /web-bot-auth/,
    ],
    [
      'without @authority',
      () => signed({ components: '("@method" "@path" "signature-agent";key="sig1")' }),
      /@authority/,
    ],
    ['without @path', () => signed({ components: '("@authority" "@method" "signature-agent";key="sig1")' }), /@path/],
    [
      'made for another host (replayed here with its Host)',
      () => signed({ url: 'https://other.example/articles/1' }).then((h) => ({ ...h, host: 'other.example' })),
      /another host/,
    ],
    ['with Signature-Agent not signed', () => signed({ components: '("@authority" "@method" "@path")' }), /not signed/],
    ['naming an http, non-loopback agent', () => signed({ agent: 'http://agent.example' }), /https origin/],
    ['naming an agent with a path', () => signed({ agent: `${agent.origin}/keys` }), /https origin/],
  ])('refuses a signature %s', async (_what, make, reason) => {
    const answer = await check(await make());
    expect(answer).toMatchObject({ status: 'invalid', reason: expect.stringMatching(reason) });
    expect(agent.fetches).toBe(0); // refused before any directory fetch
  });

  it('refuses a signature by a key the directory does not list, or a key it lists but that did not sign', async () => {
    const stranger = await generateEd25519Jwk();
    expect(await check(await signed({ key: stranger }))).toMatchObject({
      status: 'invalid',
      reason: expect.stringMatching(/not in the key directory/),
    });
    const posing = await signed({
      key: stranger,
      params: `;created=${now()};expires=${now() + 60};keyid="${jwkThumbprint(agent.key)}";nonce="x";tag="web-bot-auth"`,
    });
    expect(await check(posing)).toMatchObject({ status: 'invalid', reason: 'the signature does not verify' });
  });

  it.each<[string, (headers: Record<string, string>) => Record<string, string>, string, string]>([
    ['another path', (h) => h, '/articles/2', 'site.example'],
    ['another site', (h) => h, '/articles/1', 'other.example'],
    [
      'another agent in Signature-Agent',
      (h) => ({ ...h, 'signature-agent': 'sig1="https://chatgpt.com"' }),
      '/articles/1',
      'site.example',
    ],
    [
      'a changed signature',
      (h) => ({ ...h, signature: h.signature.replace(/:(.)/, (_m, c: string) => `:${c === 'A' ? 'B' : 'A'}`) }),
      '/articles/1',
      'site.example',
    ],
  ])('refuses a signed request replayed to %s', async (_what, tamper, url, host) => {
    const answer = await check(tamper(await signed()), verifier(), url, host);
    expect(answer.status).not.toBe('verified');
  });

  it('refuses a replayed nonce, and a replayed signature without nonce, within the validity window', async () => {
    const web = verifier();
    const headers = await signed();
    expect((await check(headers, web)).status).toBe('verified');
    expect(await check(headers, web)).toMatchObject({ status: 'invalid', reason: 'the nonce was used before' });
    const bare = await signed({
      params: `;created=${now()};expires=${now() + 60};keyid="${jwkThumbprint(agent.key)}";tag="web-bot-auth"`,
    });
    expect((await check(bare, web)).status).toBe('verified');
    expect((await check(bare, web)).status).toBe('invalid');
  });

  it('refuses a replay in the last second the signature is accepted: the replay memory outlives acceptance', async () => {
    // Expiry was judged in whole seconds while the memory forgot at the second's start: a
    // signature replayed in that second verified again, as often as it was sent.
    let clock = Date.now();
    const created = Math.floor(clock / 1000);
    const web = verifier({ now: () => clock, clockSkewSeconds: 60 });
    const headers = await signed({
      params: `;created=${created};expires=${created + 60};keyid="${jwkThumbprint(agent.key)}";nonce="edge";tag="web-bot-auth"`,
    });
    expect((await check(headers, web)).status).toBe('verified');
    for (const late of [-1, 0, 100, 999]) {
      clock = (created + 60 + 60) * 1000 + late;
      expect((await check(headers, web)).status).toBe('invalid');
    }
  });

  it("refuses a replay at a server whose clock is behind the first one's: the shared store remembers for the skew too", async () => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 0 });
    const prefix = `crawlgate-test:${randomUUID()}:`;
    try {
      const created = Math.floor(Date.now() / 1000) - 100;
      const endMs = (created + 60 + 60) * 1000; // expires + clock skew
      const ahead = () => endMs - 300; // the first server: 300 ms before the signature's end
      const behind = () => ahead() - 30_000; // another server of the site, 30 s behind (within the skew)
      const server = (now: () => number) =>
        verifier({ now, clockSkewSeconds: 60, replayStore: redisReplayStore(redis, { prefix, now }) });
      const headers = await signed({
        params: `;created=${created};expires=${created + 60};keyid="${jwkThumbprint(agent.key)}";nonce="${randomUUID()}";tag="web-bot-auth"`,
      });
      expect((await check(headers, server(ahead))).status).toBe('verified');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await check(headers, server(behind))).toMatchObject({
        status: 'invalid',
        reason: expect.stringMatching(/shared/),
      });
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('lets only one of concurrent copies of a signed request verify', async () => {
    const web = verifier();
    const headers = await signed();
    const answers = await Promise.all(Array.from({ length: 10 }, () => check(headers, web)));
    expect(answers.filter((answer) => answer.status === 'verified')).toHaveLength(1);
  });

  it('keeps verifying a known signer while other origins fill the replay memory, flush the directory cache and hold every fetch slot', async () => {
    const web = verifier({ knownSigners: [agent.origin], maxNonces: 80, maxDirectories: 4, maxConcurrentFetches: 2 });
    expect((await check(await signed(), web)).status).toBe('verified');
    const others = await Promise.all(Array.from({ length: 8 }, () => startAgentDirectory()));
    const hanging = await Promise.all(Array.from({ length: 8 }, () => startAgentDirectory('slow')));
    try {
      // Origins cost an attacker nothing: each signs as many requests as one signer may have remembered.
      let verified = 0;
      for (const other of others)
        for (let i = 0; i < 10; i++)
          if (
            (await check(await handSigned({ key: other.key, agent: other.origin, url: SITE }), web)).status ===
            'verified'
          )
            verified++;
      expect(verified).toBeGreaterThanOrEqual(40);
      // Then origins whose directories never answer: they push the cache's other entries out and hold the fetch slots.
      const held = hanging.map(async (other) =>
        check(await handSigned({ key: other.key, agent: other.origin, url: SITE }), web),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await check(await signed(), web)).status).toBe('verified');
      // Others are crowded out, as before: one of the first origins again finds its directory gone and no slot.
      expect(
        (await check(await handSigned({ key: others[0].key, agent: others[0].origin, url: SITE }), web)).status,
      ).toBe('unverified');
      for (const other of hanging) await other.close();
      await Promise.all(held);
    } finally {
      await Promise.all([...others, ...hanging].map((other) => other.close()));
    }
  });

  it('is unverified, not invalid, when the key cannot be had: no Signature-Agent, directory down, another discovery type, replay memory full', async () => {
    expect(await check(await signed({ agentHeader: null, components: '("@authority" "@path")' }))).toMatchObject({
      status: 'unverified',
    });
    agent.mode = 'down';
    expect(await check(await signed())).toMatchObject({ status: 'unverified', reason: expect.stringMatching(/500/) });
    expect(await check(await signed({ agentHeader: `sig1="${agent.origin}";type=jwks_uri` }))).toMatchObject({
      status: 'unverified',
      reason: expect.stringMatching(/type=directory/),
    });
    agent.mode = 'ok';
    const full = verifier({ maxNonces: 1 });
    expect((await check(await signed(), full)).status).toBe('verified');
    expect(await check(await signed(), full)).toMatchObject({
      status: 'unverified',
      reason: expect.stringMatching(/too many/),
    });
  });

  it.each([
    ['no Signature', { 'signature-input': 'sig1=("@authority");created=1;expires=2;keyid="k";tag="web-bot-auth"' }],
    ['no Signature-Input', { signature: 'sig1=:AAAA:' }],
    ['an unparsable Signature-Input', { 'signature-input': 'sig1=(', signature: 'sig1=:AAAA:' }],
    [
      'a short signature',
      {
        'signature-input': `sig1=("@authority");created=${Math.floor(Date.now() / 1000)};expires=${Math.floor(Date.now() / 1000) + 9};keyid="k";tag="web-bot-auth"`,
        signature: 'sig1=:AAAA:',
      },
    ],
    [
      'a signature under another label',
      {
        'signature-input': `sig1=("@authority");created=${Math.floor(Date.now() / 1000)};expires=${Math.floor(Date.now() / 1000) + 9};keyid="k";tag="web-bot-auth"`,
        signature: `sig2=:${'A'.repeat(86)}==:`,
      },
    ],
  ])('refuses %s', async (_what, headers) => {
    expect((await check(headers)).status).toBe('invalid');
  });
});

describe("the site's own hosts", () => {
  it('verifies only on the site domain (as its terms give it) or a listed alias, in any case, with or without the default port or the root dot', async () => {
    let domain: string | undefined = 'Site.Example.';
    const web = verifier({ hosts: ['www.site.example', 'cdn.example:8443'] }, () => domain);
    for (const host of [
      'site.example',
      'SITE.example:443',
      'site.example.:80',
      'www.site.example',
      'cdn.example:8443',
    ]) {
      expect(await check(await signed({ url: `https://${host}/articles/1` }), web, '/articles/1', host)).toMatchObject({
        status: 'verified',
      });
    }
    for (const host of ['other.example', 'cdn.example', 'site.example:8443', 'site.example.other.example']) {
      expect(await check(await signed({ url: `https://${host}/articles/1` }), web, '/articles/1', host)).toMatchObject({
        status: 'invalid',
        reason: expect.stringMatching(/another host/),
      });
    }
    // A new domain (the terms refreshed) replaces the old one; none known: nothing verifies, not even an alias.
    domain = 'new.example';
    expect((await check(await signed(), web)).status).toBe('invalid');
    expect(
      (await check(await signed({ url: 'https://new.example/articles/1' }), web, '/articles/1', 'new.example')).status,
    ).toBe('verified');
    domain = undefined;
    expect(
      await check(await signed({ url: 'https://www.site.example/articles/1' }), web, '/articles/1', 'www.site.example'),
    ).toMatchObject({ status: 'unverified', reason: expect.stringMatching(/domain is not known/) });
    expect(agent.fetches).toBe(1);
  });

  it('standalone, without hosts: nothing verifies', async () => {
    expect(await check(await signed(), verifier({ hosts: undefined }))).toMatchObject({ status: 'unverified' });
  });

  it('refuses hosts that are not host[:port]', () => {
    for (const host of [
      'https://www.example',
      'www.example/',
      'user@www.example',
      '',
      ' www.example',
      'www.example:port',
    ]) {
      expect(() => verifier({ hosts: [host] })).toThrow(/webBotAuth.hosts/);
    }
    expect(() => verifier({ hosts: ['WWW.example.:443', '127.0.0.1:8080', '[::1]:3000'] })).not.toThrow();
  });

  it('refuses numeric options it cannot read: a skew that is not a number would accept a signature, and its replays, for ever', () => {
    for (const clockSkewSeconds of [Number.NaN, Number(undefined), -1, 1.5, Infinity, 3601, '60' as never])
      expect(() => verifier({ clockSkewSeconds })).toThrow(/webBotAuth.clockSkewSeconds/);
    for (const maxNonces of [Number.NaN, 0, -5, 2.5, Infinity, '100' as never])
      expect(() => verifier({ maxNonces })).toThrow(/webBotAuth.maxNonces/);
    for (const maxLifetimeSeconds of [Number.NaN, 0, 86_401])
      expect(() => verifier({ maxLifetimeSeconds })).toThrow(/webBotAuth.maxLifetimeSeconds/);
    // A count that is not a number bounds nothing: the directory cache or the fetches in flight would grow without end.
    for (const name of [
      'directoryTimeoutMs',
      'directoryMaxBytes',
      'directoryTtlMs',
      'maxDirectories',
      'maxConcurrentFetches',
      'replayStoreTimeoutMs',
    ] as const) {
      for (const value of [Number.NaN, 0, 1.5, Infinity, '8' as never])
        expect(() => verifier({ [name]: value })).toThrow(new RegExp(`webBotAuth.${name}`));
      expect(() => verifier({ [name]: 1 })).not.toThrow();
    }
    expect(() => verifier({ clockSkewSeconds: 0, maxNonces: 1, maxLifetimeSeconds: 86_400 })).not.toThrow();
    expect(() => verifier({ clockSkewSeconds: 3600 })).not.toThrow();
  });

  it('siteAuthority: lower case, no default port, no root dot', () => {
    expect(
      [
        'Site.Example.:443',
        'site.example:80',
        'site.example:8080',
        'site.example.:8080',
        '[::1]:443',
        '[::1]:8443',
      ].map(siteAuthority),
    ).toEqual(['site.example', 'site.example', 'site.example:8080', 'site.example:8080', '[::1]', '[::1]:8443']);
  });
});

describe('claimsSignature', () => {
  it('is true for a Signature-Agent or a web-bot-auth Signature-Input, false for a plain request or another signature (a webhook’s)', () => {
    expect(claimsSignature({ 'user-agent': 'x' })).toBe(false);
    expect(claimsSignature({ 'signature-agent': '"https://chatgpt.com"' })).toBe(true);
    expect(
      claimsSignature({ 'signature-input': 'sig1=("@authority");tag="web-bot-auth"', signature: 'sig1=:AA==:' }),
    ).toBe(true);
    expect(claimsSignature({ 'signature-input': ['sig0=("@method")', 'sig1=("@authority");tag="web-bot-auth"'] })).toBe(
      true,
    );
    expect(
      claimsSignature({
        'signature-input': 'sig1=("@method" "content-digest");keyid="webhook"',
        signature: 'sig1=:AA==:',
      }),
    ).toBe(false);
    expect(claimsSignature({ signature: 'x' })).toBe(false);
  });
});

describe('requestView', () => {
  it('splits path and query, drops a fragment, and joins repeated header lines', () => {
    const view = requestView({ method: 'GET', url: '/a/b?x=1#f' }, { host: 'h.example', 'x-list': ['a', 'b'] });
    expect([view.authority, view.path, view.query, view.header('x-list')]).toEqual([
      'h.example',
      '/a/b',
      '?x=1',
      'a, b',
    ]);
  });
});
