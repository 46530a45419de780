import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signPayment, transfersTo } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import {
  createTestDatabase,
  FAULT_TEST_POSTGRES_URL,
  holdAdvisoryLock,
  type TestDatabase,
} from '../../test/test-database';
import type { Database } from '../db/database';
import { payerTurnLock, PAYER_TURN_WAIT_MS } from '../payments/payment.store';

// Two connections holding one lock need a server: this file runs on PostgreSQL even on a PGlite run.
/*
 * A payer's turn (the lock an authorization's claim is written under) held by a stalled instance:
 * a frozen process, or its link to the database hung after it took the lock. Every claim of that
 * payer, on every instance, waited on it without limit, each holding a pooled connection, until the
 * instance's pool ran dry and unrelated requests failed too.
 */
describe('a payer’s turn held by a stalled instance', () => {
  let db: TestDatabase;
  let stalled: Database;
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const agent = newWallet();

  beforeAll(async () => {
    db = await createTestDatabase({ postgresUrl: FAULT_TEST_POSTGRES_URL });
    stalled = await db.connectAnother();
    app = await startTestApp({ database: db.database, isolateChain: true });
    ({ site } = await pricedSite(app, payTo));
    await fundUsdc(app, agent.address, '1');
  });
  afterAll(async () => {
    await app.close();
    await db.dispose();
  });

  it('answers the payer’s claims 503 within the wait, nothing charged, other requests served, and takes them once the turn is free', async () => {
    const gates = await Promise.all(Array.from({ length: 12 }, (_, i) => openGate(app, site, `/stalled/${i}`)));
    const payments = await Promise.all(gates.map((gate) => signPayment(app, agent, gate)));
    const holding = await holdAdvisoryLock(
      stalled,
      payerTurnLock(app.chain.chainId, app.chain.usdc, agent.address.toLowerCase()),
    );
    try {
      const started = performance.now();
      const answers = await Promise.all(
        gates.map((gate, i) => app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment: payments[i] } })),
      );
      // More than the pool's 10 connections waited at once; each was let go at the wait's end.
      expect(answers.map((answer) => answer.status)).toEqual(gates.map(() => 503));
      expect([answers[0].body.detail, answers[0].headers.get('retry-after')]).toEqual([
        expect.stringMatching(/nothing was charged/),
        '1',
      ]);
      expect(performance.now() - started).toBeLessThan(4 * PAYER_TURN_WAIT_MS);
      expect(await app.database.prisma.payment.count({ where: { payer: agent.address.toLowerCase() } })).toBe(0);
      // Unrelated requests are served meanwhile.
      expect((await openGate(app, site, '/stalled/other')).id).toEqual(expect.any(String));
    } finally {
      await holding.release();
    }
    // The turn free again, the same payment goes through, once.
    const paid = await app.call('POST', `/v1/gates/${gates[0].id}/verify`, { body: { payment: payments[0] } });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(await transfersTo(app, payTo)).toHaveLength(1);
  }, 60_000);
});
