import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signPayment, usdcBalance } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { createProxiedTestDatabase, type TestDatabase } from '../../test/test-database';
import type { TcpProxy } from '../../test/tcp-proxy';
import { ReconcilerService } from './reconciler.service';

// A statement must fail at an exact moment, so this file runs on PostgreSQL even on a PGlite run.

/**
 * A settlement that landed while the database failed the token's signing. The payer paid on chain:
 * its payment must end confirmed with a token (by the reconciler, or a later verify), never
 * confirmed without one, which answered 410 ("site deleted") to that payer for good.
 */
describe('a database error while a settled payment is confirmed', () => {
  let proxy: TcpProxy;
  let db: TestDatabase;
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  /** What the next statement sent to PostgreSQL meets. */
  let onStatement: ((sql: string) => 'reset' | void) | undefined;

  beforeAll(async () => {
    ({ db, proxy } = await createProxiedTestDatabase((chunk, direction) =>
      direction === 'to-target' ? onStatement?.(chunk.toString('latin1')) : undefined,
    ));
    app = await startTestApp({ database: db.database, isolateChain: true });
    ({ site } = await pricedSite(app, payTo));
  });
  afterAll(async () => {
    onStatement = undefined;
    await app.close();
    await db.dispose();
    await proxy.close();
  });

  /** A funded payer's payment for a new gate of `path`. */
  async function paymentFor(path: string) {
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    const gate = await openGate(app, site, path);
    return { gate, payment: await signPayment(app, agent, gate) };
  }

  /** Resets the connection carrying the `nth` statement matching `read`; answers how many there were. */
  function resetRead(read: RegExp, nth: number): () => number {
    let reads = 0;
    onStatement = (sql) => {
      if (read.test(sql) && ++reads === nth) return 'reset';
    };
    return () => reads;
  }
  /** The site's payment terms (SitePaymentTermsStore.get), read first when the gate is looked up. */
  const SITE_TERMS_READ = /SELECT s\.id, s\.publisher_id, s\.batch_settlement/;
  /** The site's secrets version alone, read when a token is signed. */
  const SECRETS_VERSION_READ = /SELECT secrets_version FROM sites/;

  it('answers a gate whose lookup meets a database error 503, not 404: the gate is still there to pay', async () => {
    const { gate, payment } = await paymentFor('/article/looked-up-late');
    resetRead(SITE_TERMS_READ, 1);
    const first = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    onStatement = undefined;
    expect({ status: first.status, retryAfter: first.headers.get('retry-after') !== null }).toEqual({
      status: 503,
      retryAfter: true,
    });
    expect(await usdcBalance(app, payTo)).toBe(0n);
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status === 200 ? 200 : again).toBe(200);
    expect(await usdcBalance(app, payTo)).toBe(BigInt(gate.amount));
  });

  it('leaves the payment to be confirmed again with its token, never confirmed without one', async () => {
    const { gate, payment } = await paymentFor('/article/confirmed-late');
    // The site's secrets version is read when the token is signed (the gate's lookup reads it with the
    // site's terms): the connection carrying that read is reset.
    const versionReads = resetRead(SECRETS_VERSION_READ, 1);
    const before = await usdcBalance(app, payTo);
    const first = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    onStatement = undefined;
    expect(versionReads()).toBeGreaterThanOrEqual(1);
    // The reset met this request's token (a read elsewhere would leave it answered with one).
    expect(first.status).not.toBe(200);
    // The transfer landed: the payer paid.
    expect((await usdcBalance(app, payTo)) - before).toBe(BigInt(gate.amount));
    expect(first.status).not.toBe(410);

    await app.app.get(ReconcilerService).runOnce();
    const again = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(again.status === 200 ? 200 : again).toBe(200);
    const check = await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: again.body.access_token, url: '/article/confirmed-late' },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(check.body).toMatchObject({ valid: true });
    expect((await usdcBalance(app, payTo)) - before).toBe(BigInt(gate.amount));
  });
});
