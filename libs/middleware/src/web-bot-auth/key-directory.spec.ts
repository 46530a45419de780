import { generateEd25519Jwk, jwkThumbprint, webBotAuthKeyDirectory } from '@crawlgate/core';
import { startAgentDirectory, type AgentDirectory } from '../../testing/agent-directory';
import { createKeyDirectory, refusedOrigin, type KeyDirectoryOptions } from './key-directory';

let directories: AgentDirectory[] = [];
afterEach(async () => {
  await Promise.all(directories.map((d) => d.close()));
  directories = [];
});

async function served(mode: Parameters<typeof startAgentDirectory>[0] = 'ok') {
  const directory = await startAgentDirectory(mode);
  directories.push(directory);
  return directory;
}

/** A clock the test moves; fetches still take real time. */
function clock(start = 1_700_000_000_000) {
  const state = { at: start };
  return Object.assign(() => state.at, { advance: (ms: number) => void (state.at += ms) });
}

// Long enough never to fire on a loaded machine; the slow directory's cases set a short one (it never answers).
const loopback = (options: KeyDirectoryOptions = {}) =>
  createKeyDirectory({ allowLoopback: true, timeoutMs: 10_000, ...options });

describe('createKeyDirectory', () => {
  it('finds a listed key by its thumbprint and fetches the directory once while it is fresh', async () => {
    const agent = await served();
    const keys = loopback();
    const keyid = jwkThumbprint(agent.key);
    expect((await keys.key(agent.origin, keyid)).kind).toBe('found');
    expect((await keys.key(agent.origin, keyid)).kind).toBe('found');
    expect(agent.fetches).toBe(1);
  });

  it('shares one fetch between concurrent lookups', async () => {
    const agent = await served();
    const keys = loopback();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => keys.key(agent.origin, jwkThumbprint(agent.key))),
    );
    expect(answers.every((answer) => answer.kind === 'found')).toBe(true);
    expect(agent.fetches).toBe(1);
  });

  it('answers absent for a key the directory does not list, and refetches for it (a rotation) at most once a minute', async () => {
    const agent = await served();
    const now = clock();
    const keys = loopback({ now });
    const next = await generateEd25519Jwk();
    expect((await keys.key(agent.origin, jwkThumbprint(agent.key))).kind).toBe('found');
    expect(await keys.key(agent.origin, jwkThumbprint(next))).toEqual({ kind: 'absent' });
    expect(agent.fetches).toBe(1);
    agent.listed = [next];
    now.advance(60_000);
    expect((await keys.key(agent.origin, jwkThumbprint(next))).kind).toBe('found');
    // The new directory no longer lists the old key: it stops verifying.
    expect(await keys.key(agent.origin, jwkThumbprint(agent.key))).toEqual({ kind: 'absent' });
    expect(agent.fetches).toBe(2);
  });

  it.each([
    ['down (500)', 'down', /500/],
    ['slow (no answer within the timeout)', 'slow', /timeout|abort/i],
    ['huge (over the byte cap, no content-length)', 'huge', /larger than/],
    ['not JSON', 'not-json', /not JSON/],
    ['served as text/html', 'html', /text\/html/],
    ['a redirect', 'redirect', /302/],
  ] as const)(
    'is unavailable when the directory is %s, and remembers the failure for a while',
    async (_what, mode, reason) => {
      const agent = await served(mode);
      const now = clock();
      const keys = loopback({ now, maxBytes: 65_536, timeoutMs: mode === 'slow' ? 1000 : 10_000 });
      const answer = await keys.key(agent.origin, jwkThumbprint(agent.key));
      expect(answer).toEqual({ kind: 'unavailable', reason: expect.stringMatching(reason) });
      await keys.key(agent.origin, jwkThumbprint(agent.key));
      expect(agent.fetches).toBe(1);
      agent.mode = 'ok';
      now.advance(60_000);
      expect((await keys.key(agent.origin, jwkThumbprint(agent.key))).kind).toBe('found');
    },
  );

  it('keeps its own deadline when the fetch ignores its abort signal, and holds the fetch slot until it ends', async () => {
    const agent = await served();
    const other = await served();
    // Ignores its signal, and answers only after 300 ms.
    let late = true;
    const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      if (late) await new Promise((resolve) => setTimeout(resolve, 300));
      return globalThis.fetch(input, { ...init, signal: undefined });
    }) as typeof globalThis.fetch;
    const keys = loopback({ fetch, timeoutMs: 50, maxConcurrentFetches: 1 });
    expect(await keys.key(agent.origin, jwkThumbprint(agent.key))).toEqual({
      kind: 'unavailable',
      reason: 'no answer within 50 ms',
    });
    // Its fetch still runs: no other origin starts one meanwhile.
    expect(await keys.key(other.origin, jwkThumbprint(other.key))).toEqual({
      kind: 'unavailable',
      reason: expect.stringMatching(/too many fetches/),
    });
    expect(other.fetches).toBe(0);
    late = false;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await keys.key(other.origin, jwkThumbprint(other.key))).kind).toBe('found');
  });

  it('is unavailable when nothing listens', async () => {
    const agent = await served();
    const origin = agent.origin;
    await agent.close();
    directories = [];
    expect((await loopback().key(origin, jwkThumbprint(agent.key))).kind).toBe('unavailable');
  });

  it('keeps keys that loaded before while a refresh fails, up to the staleness bound', async () => {
    const agent = await served();
    const now = clock();
    const keys = loopback({ now, ttlMs: 60_000, maxStaleMs: 120_000 });
    const keyid = jwkThumbprint(agent.key);
    expect((await keys.key(agent.origin, keyid)).kind).toBe('found');
    agent.mode = 'down';
    now.advance(61_000);
    expect((await keys.key(agent.origin, keyid)).kind).toBe('found');
    expect(agent.fetches).toBe(2);
    now.advance(180_000);
    expect((await keys.key(agent.origin, keyid)).kind).toBe('unavailable');
  });

  it('keeps no key past the staleness bound while every fetch slot is held: a revoked key stays revoked', async () => {
    // The bound was applied only when a refresh failed; with the slots held by slow directories of
    // made-up origins, no refresh ran, and a key removed days ago kept verifying.
    const agent = await served();
    const slow = await served('slow');
    const now = clock();
    const keys = loopback({ now, ttlMs: 60_000, maxStaleMs: 120_000, maxConcurrentFetches: 1, timeoutMs: 1000 });
    const keyid = jwkThumbprint(agent.key);
    expect((await keys.key(agent.origin, keyid)).kind).toBe('found');
    now.advance(61_000 + 120_000 + 1);
    const holding = keys.key(slow.origin, jwkThumbprint(slow.key));
    expect(await keys.key(agent.origin, keyid)).toEqual({ kind: 'unavailable', reason: expect.any(String) });
    expect(agent.fetches).toBe(1);
    await holding;
  });

  it('honours Cache-Control max-age within its bounds', async () => {
    // The loopback server sends none: the default TTL applies (one fetch within it).
    const agent = await served();
    const now = clock();
    const keys = loopback({ now, ttlMs: 120_000 });
    await keys.key(agent.origin, jwkThumbprint(agent.key));
    now.advance(119_000);
    await keys.key(agent.origin, jwkThumbprint(agent.key));
    expect(agent.fetches).toBe(1);
    now.advance(2_000);
    await keys.key(agent.origin, jwkThumbprint(agent.key));
    expect(agent.fetches).toBe(2);
  });

  it('skips keys whose kid is not their thumbprint, and keys outside nbf/exp', async () => {
    const agent = await served();
    const [listed] = webBotAuthKeyDirectory([agent.key]).keys;
    const seconds = 1_700_000_000;
    const later = await generateEd25519Jwk();
    const expired = await generateEd25519Jwk();
    agent.body = {
      keys: [
        { ...listed, kid: 'not-the-thumbprint' },
        { ...webBotAuthKeyDirectory([later]).keys[0], nbf: seconds + 3600 },
        { ...webBotAuthKeyDirectory([expired]).keys[0], exp: seconds - 1 },
        { kty: 'RSA', n: 'x', e: 'AQAB' },
      ],
    };
    const keys = loopback({ now: () => seconds * 1000 });
    expect(await keys.key(agent.origin, jwkThumbprint(agent.key))).toEqual({ kind: 'absent' });
    expect(await keys.key(agent.origin, jwkThumbprint(later))).toEqual({ kind: 'absent' });
    expect(await keys.key(agent.origin, jwkThumbprint(expired))).toEqual({ kind: 'absent' });
  });

  it('refuses a directory listing more keys than allowed, or no key list', async () => {
    const agent = await served();
    agent.body = { keys: Array.from({ length: 33 }, () => webBotAuthKeyDirectory([agent.key]).keys[0]) };
    expect(await loopback().key(agent.origin, jwkThumbprint(agent.key))).toEqual({
      kind: 'unavailable',
      reason: expect.stringMatching(/more than 32 keys/),
    });
    agent.body = { keys: 'none' };
    expect(await loopback().key(agent.origin, jwkThumbprint(agent.key))).toEqual({
      kind: 'unavailable',
      reason: expect.stringMatching(/no "keys" list/),
    });
  });

  it('keeps a bounded number of origins, least recently used dropped first', async () => {
    const [a, b, c] = [await served(), await served(), await served()];
    const keys = loopback({ maxOrigins: 2 });
    for (const agent of [a, b, c, a]) await keys.key(agent.origin, jwkThumbprint(agent.key));
    expect([a.fetches, b.fetches, c.fetches]).toEqual([2, 1, 1]);
  });

  it('starts no more than maxConcurrentFetches directory fetches at once: the others are unavailable, not queued', async () => {
    const slow = await served('slow');
    const others = [await served(), await served()];
    const keys = loopback({ maxConcurrentFetches: 1, timeoutMs: 1000 });
    const pending = keys.key(slow.origin, jwkThumbprint(slow.key));
    expect(await keys.key(others[0].origin, jwkThumbprint(others[0].key))).toEqual({
      kind: 'unavailable',
      reason: expect.stringMatching(/too many fetches/),
    });
    expect(others[0].fetches).toBe(0);
    expect((await pending).kind).toBe('unavailable');
    // Once the slot is free, the next origin is fetched.
    expect((await keys.key(others[1].origin, jwkThumbprint(others[1].key))).kind).toBe('found');
  });

  it('never drops a pinned origin for another, and fetches it while other origins hold every slot', async () => {
    const [pinned, a, b] = [await served(), await served(), await served()];
    const slow = await served('slow');
    const keys = loopback({
      maxOrigins: 1,
      maxConcurrentFetches: 1,
      timeoutMs: 1000,
      pinnedOrigins: new Set([pinned.origin]),
    });
    expect((await keys.key(pinned.origin, jwkThumbprint(pinned.key))).kind).toBe('found');
    for (const agent of [a, b, a]) await keys.key(agent.origin, jwkThumbprint(agent.key));
    expect([pinned.fetches, a.fetches, b.fetches]).toEqual([1, 2, 1]); // a was dropped for b, the pinned one never
    const holding = keys.key(slow.origin, jwkThumbprint(slow.key));
    expect((await keys.key(b.origin, jwkThumbprint(b.key))).kind).toBe('unavailable');
    expect((await keys.key(pinned.origin, jwkThumbprint(pinned.key))).kind).toBe('found');
    expect(pinned.fetches).toBe(1);
    // A pinned origin not loaded yet is fetched all the same.
    const late = await served();
    const withLate = loopback({ maxConcurrentFetches: 1, timeoutMs: 1000, pinnedOrigins: new Set([late.origin]) });
    const heldToo = withLate.key(slow.origin, jwkThumbprint(slow.key));
    expect((await withLate.key(late.origin, jwkThumbprint(late.key))).kind).toBe('found');
    await Promise.all([holding, heldToo]);
  });

  it("fetches another origin's directory on port 443 only, unless the origin is pinned (the catalogue's, or knownSigners): a signature naming any host and port must not make the gate connect there", async () => {
    const asked: string[] = [];
    const fetch = (async (url: string) => {
      asked.push(String(url));
      return new Response('{}', { status: 404 });
    }) as typeof globalThis.fetch;
    const keys = createKeyDirectory({ fetch, pinnedOrigins: new Set(['https://pinned.example:8443']) });
    expect(await keys.key('https://agent.example:8443', 'k')).toEqual({
      kind: 'unavailable',
      reason: 'a port other than 443',
    });
    await keys.key('https://agent.example', 'k');
    await keys.key('https://pinned.example:8443', 'k');
    expect(asked.map((url) => new URL(url).origin)).toEqual(['https://agent.example', 'https://pinned.example:8443']);
  });

  it('never fetches a loopback directory unless allowed', async () => {
    const agent = await served();
    expect(await createKeyDirectory().key(agent.origin, jwkThumbprint(agent.key))).toEqual({
      kind: 'unavailable',
      reason: 'a loopback address',
    });
    expect(agent.fetches).toBe(0);
  });
});

describe('refusedOrigin', () => {
  it.each(['https://chatgpt.com', 'https://agent.example:8443', 'https://1.1.1.1', 'https://[2606:4700::1111]'])(
    'lets %s be fetched once pinned (its port then free)',
    (origin) => {
      expect(refusedOrigin(origin, false, { anyPort: true })).toBeNull();
    },
  );

  it('lets an origin no one pinned be fetched on port 443 only', () => {
    expect(refusedOrigin('https://agent.example', false)).toBeNull();
    expect(refusedOrigin('https://agent.example:443', false)).toBeNull();
    expect(refusedOrigin('https://agent.example:8443', false)).toBe('a port other than 443');
  });

  it.each([
    'http://agent.example',
    'https://127.0.0.1',
    'https://localhost',
    'https://[::1]',
    'https://10.1.2.3',
    'https://172.16.0.1',
    'https://192.168.1.1',
    'https://169.254.169.254',
    'https://100.64.0.1',
    'https://0.0.0.0',
    'https://[fd00::1]',
    'https://[fe80::1]',
    'https://[::ffff:10.0.0.1]',
    'https://[::10.0.0.1]',
    'https://[::7f00:1]',
    'https://[64:ff9b::a00:1]',
    'https://[64:ff9b::10.0.0.1]',
    'https://[64:ff9b:1::a00:1]',
    'https://[2002:a00:1::]',
    'https://[2002:c0a8:101::1]',
    'https://[fec0::1]',
    // IETF protocol assignments and the documentation ranges: never a public agent.
    'https://192.0.0.1',
    'https://192.0.2.2',
    'https://198.51.100.7',
    'https://203.0.113.9',
    'https://[ff02::1]',
    'https://[2001:db8::1]',
    'https://metadata.internal',
    'https://printer.local',
    // The root's trailing dot names the same host.
    'https://localhost.',
    'https://LocalHost.:8443',
    'https://localhost..',
    'https://a.localhost.',
    'https://printer.local.',
    'https://metadata.internal.',
    'https://127.0.0.1.',
    'https://10.1.2.3.',
  ])('refuses %s', (origin) => {
    expect(refusedOrigin(origin, false)).not.toBeNull();
  });

  it('allows loopback (http too) only when asked, and still no private range', () => {
    expect(refusedOrigin('http://127.0.0.1:4000', true)).toBeNull();
    expect(refusedOrigin('http://10.0.0.1:4000', true)).not.toBeNull();
  });
});
