import { randomBytes } from 'node:crypto';
import { createSite, freshIp, registerPublisher } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { PASSWORD_ROUTES_PER_NETWORK, WALLET_ROUTES_PER_CLIENT } from './limits';

/*
 * "100 a minute per credential" means per credential, not per spelling of a header: the bucket is
 * keyed on what the route's guard authenticates, and a credential that does not authenticate
 * counts against the client's IP, so made-up values never open fresh buckets.
 */
describe('rate limits per credential', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const LIMIT = 100;
  const madeUpApiKey = () => `xk_pub_${randomBytes(32).toString('base64url')}`;
  const madeUpSiteToken = () => `st_${randomBytes(32).toString('base64url')}`;

  /** Statuses of `count` calls in a row. */
  async function statuses(count: number, call: (i: number) => Promise<{ status: number }>): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push((await call(i)).status);
    return seen;
  }

  it('counts every spelling of one API key against one bucket, X-Confirm-Password guesses included', async () => {
    const publisher = await registerPublisher(app);
    const spellings = [
      `Bearer ${publisher.apiKey}`,
      `bearer ${publisher.apiKey}`,
      `BEARER ${publisher.apiKey}`,
      `Bearer   ${publisher.apiKey}`,
      `Bearer\t${publisher.apiKey}`,
      `bEaReR \t ${publisher.apiKey}`,
    ];
    const rename = (i: number) =>
      app.call('PATCH', '/v1/publishers/me', {
        body: { name: `n${i}` },
        headers: { authorization: spellings[i % spellings.length], 'x-forwarded-for': freshIp() },
      });
    const seen = await statuses(LIMIT, rename);
    expect(seen.every((status) => status === 200)).toBe(true);
    // A stolen key's holder guessing the password gets no fresh bucket from another spelling either.
    for (const authorization of [...spellings, `Bearer  \t ${publisher.apiKey}`]) {
      const guess = await app.call('PATCH', '/v1/publishers/me', {
        body: { payout_address: newWallet().address },
        headers: { authorization, 'x-confirm-password': 'a guess', 'x-forwarded-for': freshIp() },
      });
      expect(guess.status).toBe(429);
    }
  });

  it('counts made-up API keys against the IP, and leaves a real key from that IP its own bucket', async () => {
    const ip = freshIp();
    const seen = await statuses(LIMIT + 1, () =>
      app.call('GET', '/v1/publishers/me', {
        headers: { authorization: `Bearer ${madeUpApiKey()}`, 'x-forwarded-for': ip },
      }),
    );
    expect(seen.slice(0, LIMIT).every((status) => status === 401)).toBe(true);
    expect(seen[LIMIT]).toBe(429);
    expect(
      (await app.call('GET', '/v1/publishers/me', { headers: { authorization: 'Basic abc', 'x-forwarded-for': ip } }))
        .status,
    ).toBe(429);
    expect((await app.call('GET', '/v1/publishers/me', { headers: { 'x-forwarded-for': ip } })).status).toBe(429);
    const publisher = await registerPublisher(app);
    expect(
      (await app.call('GET', '/v1/publishers/me', { headers: { ...publisher.auth, 'x-forwarded-for': ip } })).status,
    ).toBe(200);
  });

  it('counts made-up site tokens against the IP', async () => {
    const ip = freshIp();
    const check = () =>
      app.call('POST', '/v1/access-tokens/verify', {
        body: { token: 'x.y' },
        headers: { 'x-site-token': madeUpSiteToken(), 'x-forwarded-for': ip },
      });
    const seen = await statuses(LIMIT + 1, check);
    expect(seen.slice(0, LIMIT).every((status) => status === 401)).toBe(true);
    expect(seen[LIMIT]).toBe(429);
    const site = await createSite(app, await registerPublisher(app));
    const real = await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: 'x.y' },
      headers: { 'x-site-token': site.siteToken, 'x-forwarded-for': ip },
    });
    expect(real.status).toBe(200);
  });

  it('gives a route that takes no credential one bucket per IP, whatever credential headers come with it', async () => {
    const ip = freshIp();
    const headers = (i: number): Record<string, string> =>
      [
        { authorization: `Bearer ${madeUpApiKey()}` },
        { 'x-site-token': madeUpSiteToken() },
        { 'x-wallet-address': newWallet().address },
        {},
      ][i % 4];
    const faucet = (i: number) =>
      app.call('POST', '/v1/dev/faucet', { body: {}, headers: { ...headers(i), 'x-forwarded-for': ip } });
    const seen = await statuses(LIMIT + 1, faucet);
    expect(seen.slice(0, LIMIT).every((status) => status === 422)).toBe(true);
    expect(seen[LIMIT]).toBe(429);
  });

  it('counts a client by the address the proxy appended, never by X-Forwarded-For entries the client wrote', async () => {
    const client = freshIp();
    const login = (i: number) =>
      app.call('POST', '/v1/publishers/login', {
        body: { email: 'nobody@example.com', password: `guess ${i}` },
        // The client's own made-up entry first, then the one the load balancer appended.
        headers: { 'x-forwarded-for': `${freshIp()}, ${client}` },
      });
    const seen = await statuses(6, login);
    expect(seen.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(seen[5]).toBe(429);
  });

  it('keeps one bucket per wallet address and client on the routes that take one, in any letter case', async () => {
    // The address proves nothing (anyone may send it): requests naming it from elsewhere never hold its owner off.
    const wallet = newWallet().address;
    const ip = freshIp();
    const spellings = [wallet, wallet.toLowerCase(), `0x${wallet.slice(2).toUpperCase()}`];
    const seen = await statuses(LIMIT + 1, (i) =>
      app.call('GET', '/v1/agents/me', { headers: { 'x-wallet-address': spellings[i % 3], 'x-forwarded-for': ip } }),
    );
    expect(seen.slice(0, LIMIT).every((status) => status === 200)).toBe(true);
    expect(seen[LIMIT]).toBe(429);
    // The 429 speaks of the address's bucket only: nothing of the client's, whose 1,000 are not spent.
    const refused = await app.call('GET', '/v1/agents/me', {
      headers: { 'x-wallet-address': wallet, 'x-forwarded-for': ip },
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('x-ratelimit-remaining')).toBeNull();
    const owner = { 'x-forwarded-for': freshIp() };
    expect((await app.call('GET', '/v1/agents/me', { headers: { 'x-wallet-address': wallet, ...owner } })).status).toBe(
      200,
    );
    expect(
      (await app.call('GET', '/v1/agents/me', { headers: { 'x-wallet-address': newWallet().address } })).status,
    ).toBe(200);
  });

  it('holds one client to WALLET_ROUTES_PER_CLIENT across every wallet address it names', async () => {
    const ip = freshIp();
    const anyWallet = () => `0x${randomBytes(20).toString('hex')}`;
    const routes = ['/v1/agents/me', '/v1/agents/me/payments'];
    // An answer's X-RateLimit headers are its address's bucket, the one the spec names.
    const first = await app.call('GET', routes[0], {
      headers: { 'x-wallet-address': anyWallet(), 'x-forwarded-for': ip },
    });
    expect([first.status, first.headers.get('x-ratelimit-limit')]).toEqual([200, String(LIMIT)]);
    const seen = await statuses(WALLET_ROUTES_PER_CLIENT.limit, (i) =>
      app.call('GET', routes[i % 2], { headers: { 'x-wallet-address': anyWallet(), 'x-forwarded-for': ip } }),
    );
    // The history answers 401 without the wallet's proof, and is counted all the same.
    expect(seen.slice(0, WALLET_ROUTES_PER_CLIENT.limit - 1).every((status, i) => status === (i % 2 ? 401 : 200))).toBe(
      true,
    );
    expect(seen[WALLET_ROUTES_PER_CLIENT.limit - 1]).toBe(429);
    const over = await app.call('GET', '/v1/agents/me', {
      headers: { 'x-wallet-address': anyWallet(), 'x-forwarded-for': ip },
    });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.body).toEqual({ detail: expect.any(String) });
    // Another client, naming any wallet, is not held off.
    expect(
      (
        await app.call('GET', '/v1/agents/me', {
          headers: { 'x-wallet-address': anyWallet(), 'x-forwarded-for': freshIp() },
        })
      ).status,
    ).toBe(200);
  }, 90_000); // a thousand requests, on a loaded machine

  it('counts the addresses of one IPv6 /64 as one client', async () => {
    const prefix = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    const register = (i: number) =>
      app.call('POST', '/v1/publishers/register', {
        body: { email: `v6-${prefix.replace(/:/g, '-')}-${i}@example.com`, password: 'long enough pw' },
        headers: { 'x-forwarded-for': `${prefix}::${i + 1}` },
      });
    expect(await statuses(6, register)).toEqual([201, 201, 201, 201, 201, 429]);
  });

  it('counts registrations and logins from one IPv6 /48 or IPv4 /24 together, whatever /64 or address each comes from (helper-442)', async () => {
    const v6 = `2001:db8:${randomBytes(2).toString('hex')}`;
    const v4 = `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    for (const [network, address] of [
      [v6, (i: number) => `${v6}:${(i + 1).toString(16)}::1`], // each in a /64 of its own
      [v4, (i: number) => `${v4}.${i + 1}`],
    ] as const) {
      const tag = network.replace(/[:.]/g, '-');
      // Each password route in turn: a registration, then a login with a wrong password.
      const attempt = (i: number) =>
        app.call('POST', i % 2 ? '/v1/publishers/login' : '/v1/publishers/register', {
          body: { email: `net-${tag}-${i}@example.com`, password: 'long enough pw' },
          headers: { 'x-forwarded-for': address(i) },
        });
      const seen = await statuses(PASSWORD_ROUTES_PER_NETWORK.limit + 1, attempt);
      expect(seen.slice(0, -1).filter((status) => status === 429)).toEqual([]);
      expect(seen.at(-1)).toBe(429);
    }
    // Another network is not held off.
    const elsewhere = await app.call('POST', '/v1/publishers/register', {
      body: { email: `net-elsewhere-${randomBytes(4).toString('hex')}@example.com`, password: 'long enough pw' },
      headers: { 'x-forwarded-for': `2001:db8:${randomBytes(2).toString('hex')}::1` },
    });
    expect(elsewhere.status).toBe(201);
  });

  it('counts against the network only what the per-IP limit let through: one flooding address does not lock its network out (helper-444)', async () => {
    const network = `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;
    const register = (ip: string, i: number) =>
      app.call('POST', '/v1/publishers/register', {
        body: { email: `flood-${network}-${ip}-${i}@example.com`, password: 'long enough pw' },
        headers: { 'x-forwarded-for': ip },
      });
    const flooder = await statuses(PASSWORD_ROUTES_PER_NETWORK.limit, (i) => register(`${network}.1`, i));
    expect(flooder.filter((status) => status === 201)).toHaveLength(5);
    // Its neighbours have the rest of the network's budget: all of it but the five it was let through.
    const neighbours = await statuses(PASSWORD_ROUTES_PER_NETWORK.limit - 5, (i) => register(`${network}.${i + 2}`, i));
    expect(neighbours.filter((status) => status === 429)).toEqual([]);
  });

  it('counts sign-ins with made-up site tokens against the IP, whatever visitor they name; a real site’s many visitors are not', async () => {
    // A sign-in's bucket is per visitor (client_ip, wallet), named by the caller: without a valid
    // site token that would give every guess a fresh bucket.
    const ip = freshIp();
    const signIn = (i: number, siteToken: string) =>
      app.call('POST', '/v1/access-tokens/siwx', {
        body: { proof: 'not a proof', url: '/articles/x', client_ip: `10.0.${(i >> 8) & 255}.${i & 255}` },
        headers: { 'x-site-token': siteToken, 'x-forwarded-for': ip },
      });
    const madeUp = await statuses(LIMIT + 1, (i) => signIn(i, madeUpSiteToken()));
    expect(madeUp.slice(0, LIMIT).every((status) => status === 401)).toBe(true);
    expect(madeUp[LIMIT]).toBe(429);
    // A real site's token from that IP: each visitor its own bucket, none spent.
    const site = await createSite(app, await registerPublisher(app));
    const real = await statuses(LIMIT + 1, (i) => signIn(i, site.siteToken));
    expect(real.filter((status) => status === 429)).toEqual([]);
  });
});
