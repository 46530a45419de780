import { randomUUID } from 'node:crypto';
import { readGate, signGate } from '@crawlgate/core';
import { freshIp, middlewareGate, openGate, pricedSite } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { FORGED_GATES_PER_CLIENT } from '../rate-limit/limits';

/*
 * helper-412's 1: the verify route's only limit is per gate id, and a made-up id opens a bucket of
 * its own, though it costs the database its reads (the gate's payment, twice, and its site) before
 * the 404. Attacked as a client flooding it would: fresh forged ids from one address.
 */
describe('gate ids that no secret of their site signed, sent to verify', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** Any transfer proof: a forged gate is refused before its proof is looked at. */
  const proof = { tx_hash: `0x${'11'.repeat(32)}` };
  const verify = (id: string, client: string, headers: Record<string, string> = {}) =>
    app.call('POST', `/v1/gates/${id}/verify`, { body: proof, headers: { 'x-forwarded-for': client, ...headers } });

  it(`hold their client off for the minute once past ${FORGED_GATES_PER_CLIENT.limit}: its every verify answers 429 (nothing read, nothing charged), other clients' go on`, async () => {
    const { site } = await pricedSite(app, newWallet().address);
    const real = await openGate(app, site, '/article/forged-flood');
    const forged = () => signGate({ ...readGate(real.id)!, ref: randomUUID() }, 'cgsec_not-the-site-secret');
    const client = freshIp();

    // Each is read before it is known forged: the one past the budget is answered, and holds the client off.
    for (let i = 0; i <= FORGED_GATES_PER_CLIENT.limit; i++) expect((await verify(forged(), client)).status).toBe(404);
    const held = await verify(forged(), client);
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(held.body.detail).toMatch(/gate ids no secret of their site signed.*nothing was charged/i);
    // The real gate too, from that client: its proof is not looked at.
    expect((await verify(real.id, client)).status).toBe(429);

    // Another client's proof for the real gate is looked at (this one pays nothing: 402).
    expect((await verify(real.id, freshIp())).status).toBe(402);
  });

  it("count a site's middleware (its valid site token) apart from whoever shares its address: strangers' forged ids there hold off only the strangers, and forged ids the middleware forwards hold off only the site", async () => {
    const { site } = await pricedSite(app, newWallet().address);
    const real = await openGate(app, site, '/article/shared-address');
    const forged = () => signGate({ ...readGate(real.id)!, ref: randomUUID() }, 'cgsec_not-the-site-secret');
    const asSite = { 'x-site-token': site.siteToken };
    const shared = freshIp();

    for (let i = 0; i <= FORGED_GATES_PER_CLIENT.limit; i++) expect((await verify(forged(), shared)).status).toBe(404);
    expect((await verify(real.id, shared)).status).toBe(429);
    expect((await verify(real.id, shared, asSite)).status).toBe(402);

    // A middleware still holding a secret the API revoked forwards such ids: counted against its site.
    const elsewhere = freshIp();
    for (let i = 0; i <= FORGED_GATES_PER_CLIENT.limit; i++)
      expect((await verify(forged(), elsewhere, asSite)).status).toBe(404);
    expect((await verify(real.id, freshIp(), asSite)).status).toBe(429);
    expect((await verify(real.id, elsewhere)).status).toBe(402);
  });

  it('count no gate its site signed: expired ones (a transfer proof is still judged for them: 402 here) hold nobody off', async () => {
    const payTo = newWallet().address;
    const { site } = await pricedSite(app, payTo);
    const client = freshIp();
    for (let i = 0; i <= FORGED_GATES_PER_CLIENT.limit; i++) {
      const expired = middlewareGate(app, site, payTo, `/expired/${i}`, { ttlSeconds: -60 });
      expect((await verify(expired.id, client)).status).toBe(402);
    }
  });
});
