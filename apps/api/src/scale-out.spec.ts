import { signAccessToken } from '@crawlgate/core';
import { randomBytes } from 'node:crypto';
import { freshIp, openGate, pricedSite, registerPublisher } from '../test/fixtures';
import { fundUsdc, newWallet, signPayment, transfersTo } from '../test/test-agent';
import { startTestApp, type TestApp } from '../test/test-app';
import { createTestDatabase, type TestDatabase } from '../test/test-database';
import { ClaimerService } from './batch-settlement/claimer.service';
import { JOB_LOCKS, whileHoldingLock } from './db/advisory-lock';
import type { Database } from './db/database';
import { ReconcilerService } from './payments/reconciler.service';
import { SiteSecretsService } from './sites/site-secrets.service';

/** Two API instances on one database behave as one service. (Shared rate limits: rate-limit/redis-throttler.spec.ts.) */
describe('two API instances on one database', () => {
  let db: TestDatabase;
  let first: TestApp;
  let second: TestApp;
  const sharedKey = randomBytes(32);
  beforeAll(async () => {
    db = await createTestDatabase();
    first = await startTestApp({ database: db.database, masterKey: sharedKey, isolateChain: true });
    second = await startTestApp({ database: await db.connectAnother(), masterKey: sharedKey });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
    await db.dispose();
  });

  it('settle a proof replayed to both instances at once exactly once', async () => {
    const payTo = newWallet().address;
    const agent = newWallet();
    const { site } = await pricedSite(first, payTo);
    await fundUsdc(first, agent.address, '1');
    const gate = await openGate(first, site, '/scale/replay');
    const payment = await signPayment(first, agent, gate);
    const answers = await Promise.all(
      [first, second, first, second].map((instance) =>
        instance.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } }),
      ),
    );
    expect(answers.every((answer) => answer.status === 200 || answer.status === 409)).toBe(true);
    expect(new Set(answers.filter((a) => a.status === 200).map((a) => a.body.tx_hash)).size).toBe(1);
    expect(await transfersTo(first, payTo)).toHaveLength(1);

    const other = await openGate(second, site, '/scale/other');
    expect((await second.call('POST', `/v1/gates/${other.id}/verify`, { body: { payment } })).status).toBe(409);
  });

  it('refuse to start on another master key than the one any site’s secret was sealed with, whoever sealed what', async () => {
    const { site } = await pricedSite(first, newWallet().address);
    expect(site.siteId).toBeDefined(); // a site, so a sealed secret, is stored
    await expect(second.app.get(SiteSecretsService).assertMasterKeyOpensSecrets()).resolves.toBeUndefined();
    const refused =
      /master key does not open the access-token secrets of \d+ of \d+ sites stored in this database \(the first: secret \S+ of site [0-9a-f-]{36}\)/;
    const stranger = await startTestApp({ database: await db.connectAnother(), masterKey: randomBytes(32) });
    try {
      await expect(stranger.app.get(SiteSecretsService).assertMasterKeyOpensSecrets()).rejects.toThrow(refused);
      // Served anyway, it seals a new site's secret with its own key: now the shared key opens the oldest, not the newest.
      await pricedSite(stranger, newWallet().address);
      await expect(second.app.get(SiteSecretsService).assertMasterKeyOpensSecrets()).rejects.toThrow(refused);
      await expect(stranger.app.get(SiteSecretsService).assertMasterKeyOpensSecrets()).rejects.toThrow(refused);
      // A site sealed with the shared key after it: the stranger's secret sits between the oldest and the newest.
      await pricedSite(first, newWallet().address);
      await expect(second.app.get(SiteSecretsService).assertMasterKeyOpensSecrets()).rejects.toThrow(
        /secrets of 1 of /,
      );
    } finally {
      await stranger.close();
    }
  });

  it('count password guesses together, through a restart too: the budget does not grow with the instances', async () => {
    // Counted per process (Redis absent or down), each instance and each restart gave a guesser 10 more.
    const publisher = await registerPublisher(first);
    const network = freshIp().split('.').slice(0, 3).join('.');
    const login = (instance: TestApp, password: string, host: number) =>
      instance.call('POST', '/v1/publishers/login', {
        body: { email: publisher.email, password },
        headers: { 'x-forwarded-for': `${network}.${host}` },
      });
    for (let i = 1; i <= 6; i++) expect((await login(i % 2 ? first : second, `guess ${i}`, i)).status).toBe(401);
    const restarted = await startTestApp({ database: await db.connectAnother(), masterKey: sharedKey });
    try {
      for (let i = 7; i <= 10; i++) expect((await login(restarted, `guess ${i}`, i)).status).toBe(401);
      for (const instance of [first, second, restarted]) {
        const refused = await login(instance, publisher.password, 50);
        expect(refused.status).toBe(429);
        expect(refused.body.detail).toMatch(/logins for this account from your network/);
      }
    } finally {
      await restarted.close();
    }
  });

  it('serve a pricing change made through one instance from the other at once', async () => {
    const { publisher, site } = await pricedSite(first, newWallet().address);
    const priceOn = async (instance: TestApp) => (await openGate(instance, site, '/scale/price')).price_usd;
    expect(await priceOn(second)).toBe('0.01');
    await first.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
      body: { default_price_usd: '0.07' },
      headers: publisher.auth,
    });
    // The very next gate on the other instance has the new price: no cache of it waits out a lifetime there.
    expect(await priceOn(second)).toBe('0.07');
  });

  it('see a secret rotation made through one instance on the other at once, though each caches decrypted secrets', async () => {
    const { publisher, site } = await pricedSite(first, newWallet().address);
    const now = Math.floor(Date.now() / 1000);
    const token = signAccessToken(
      { gate_id: crypto.randomUUID(), site_id: site.siteId, url: '/a', kid: site.kid, iat: now, exp: now + 600 },
      site.secret,
    );
    const check = (instance: TestApp) =>
      instance.call('POST', '/v1/access-tokens/verify', {
        body: { token, url: '/a' },
        headers: { 'x-site-token': site.siteToken },
      });
    // Both instances have checked a token with the old secret (and cached it).
    expect((await check(first)).body.valid).toBe(true);
    expect((await check(second)).body.valid).toBe(true);
    const gate = await openGate(second, site, '/scale/secret');
    expect((await first.call('GET', `/v1/gates/${gate.id}`)).status).toBe(200);

    const revoked = await first.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, {
      body: { grace_seconds: 0 },
      headers: publisher.auth,
    });
    expect(revoked.status).toBe(200);
    expect((await check(second)).body).toEqual({ valid: false, reason: 'bad_signature' });
    expect((await check(first)).body).toEqual({ valid: false, reason: 'bad_signature' });
    // Gates signed with the revoked secret are gone too, on both.
    expect((await second.call('GET', `/v1/gates/${gate.id}`)).status).toBe(404);
    const fresh = signAccessToken(
      {
        gate_id: crypto.randomUUID(),
        site_id: site.siteId,
        url: '/a',
        kid: revoked.body.kid,
        iat: now,
        exp: now + 600,
      },
      revoked.body.access_token_secret,
    );
    expect(
      (
        await second.call('POST', '/v1/access-tokens/verify', {
          body: { token: fresh, url: '/a' },
          headers: { 'x-site-token': site.siteToken },
        })
      ).body.valid,
    ).toBe(true);
  });

  it.each([
    ['reconcile', JOB_LOCKS.reconciler, () => second.app.get(ReconcilerService).runOnce()],
    ['claim vouchers', JOB_LOCKS.claimer, () => second.app.get(ClaimerService).runOnce()],
  ] as const)('let only one instance %s at a time (PostgreSQL: a session advisory lock)', async (_job, lock, run) => {
    if (db.database.kind !== 'postgres') {
      // PGlite is one process on one connection: there is no other instance to exclude.
      expect(await run()).toMatchObject({ skipped: false });
      return;
    }
    const release = await holdLock(first.database, lock); // the first instance is inside the job
    expect(await run()).toMatchObject({ skipped: true });
    await release();
    expect(await run()).toMatchObject({ skipped: false });
  });

  it.each([
    ['reconcile', JOB_LOCKS.reconciler, () => second.app.get(ReconcilerService).runOnce()],
    ['claim vouchers', JOB_LOCKS.claimer, () => second.app.get(ClaimerService).runOnce()],
  ] as const)(
    '%s whatever another deployment on another schema of the same database is doing',
    async (_job, lock, run) => {
      // Advisory locks belong to the database, not the schema: had the lock been the job's alone,
      // one deployment's claimer would stop every other's (as it stopped the tests' own, one schema each).
      const other = await createTestDatabase();
      const release = await holdLock(other.database, lock);
      try {
        expect(await run()).toMatchObject({ skipped: false });
      } finally {
        await release();
        await other.dispose();
      }
    },
  );
});

/** Enters job `lock` on `database` and stays inside until the returned release is called. */
async function holdLock(database: Database, lock: number): Promise<() => Promise<void>> {
  let leave!: () => void;
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const job = whileHoldingLock(database, lock, () => {
    entered();
    return new Promise<void>((resolve) => (leave = resolve));
  });
  await Promise.race([inside, job]);
  if (!leave) throw new Error(`lock ${lock} is held by someone else`);
  return async () => {
    leave?.();
    await job;
  };
}
