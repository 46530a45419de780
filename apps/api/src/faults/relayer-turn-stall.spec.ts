import { Pool } from 'pg';
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
import { RELAYER_BROADCAST_LOCK, relayerBroadcastTurn, relayerTurnWaitMs } from '../db/relayer-broadcast-turn';
import { pgDriver } from '../db/sql-driver';

// Two connections holding one lock need a server: this file runs on PostgreSQL even on a PGlite run.
/*
 * The relayer's turn to broadcast (relayer-broadcast-turn.ts) held by a stalled instance: a frozen
 * process, or its link to the database hung after it took the lock. A payment waits for it only
 * so long, then is answered as one that sent nothing.
 */
describe('the relayer’s turn held by a stalled instance', () => {
  let db: TestDatabase;
  let stalled: Database;
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet().address;
  const agent = newWallet();

  beforeAll(async () => {
    db = await createTestDatabase({ postgresUrl: FAULT_TEST_POSTGRES_URL });
    stalled = await db.connectAnother();
    app = await startTestApp({ database: db.database, isolateChain: true, config: { chain: { rpcTimeoutMs: 1_000 } } });
    ({ site } = await pricedSite(app, payTo));
    await fundUsdc(app, agent.address, '1');
  });
  afterAll(async () => {
    await app.close();
    await db.dispose();
  });

  it('holds the turn through a broadcast longer than the server lets a transaction sit idle (helper-444)', async () => {
    // Managed PostgreSQL often ends a session idle in a transaction: its advisory lock went with it,
    // and another instance could read the same pending nonce mid-broadcast.
    const strictPool = new Pool({
      connectionString: FAULT_TEST_POSTGRES_URL,
      options: `-c idle_in_transaction_session_timeout=200 -c search_path="${db.database.schema}"`,
    });
    try {
      const turn = relayerBroadcastTurn({ ...db.database, sql: pgDriver(strictPool) }, 5_000);
      const takenElsewhere = () =>
        stalled.sql.transaction(async (tx) => {
          const [{ taken }] = await tx.query<{ taken: boolean }>(
            'SELECT pg_try_advisory_xact_lock($1::int, hashtext($2)) AS taken',
            [RELAYER_BROADCAST_LOCK, stalled.schema],
          );
          return taken;
        });
      const whileBroadcasting = await turn(async () => {
        await new Promise((resolve) => setTimeout(resolve, 600));
        return takenElsewhere();
      });
      expect(whileBroadcasting).toBe(false);
      expect(await takenElsewhere()).toBe(true);
    } finally {
      await strictPool.end();
    }
  });

  it('answers a payment 503 within the wait, nothing charged and the gate payable, and settles it once the turn is free', async () => {
    const gate = await openGate(app, site, '/relayer-stalled');
    const payment = await signPayment(app, agent, gate);
    const holding = await holdAdvisoryLock(stalled, [RELAYER_BROADCAST_LOCK, stalled.schema]);
    try {
      const started = performance.now();
      const answer = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
      expect([answer.status, answer.body.detail]).toEqual([503, expect.stringMatching(/settled nothing/)]);
      expect(performance.now() - started).toBeLessThan(2 * relayerTurnWaitMs(app.config.chain));
      expect(await transfersTo(app, payTo)).toHaveLength(0);
      expect(
        await app.database.prisma.payment.count({
          where: { payer: agent.address.toLowerCase(), txHash: { not: null } },
        }),
      ).toBe(0);
    } finally {
      await holding.release();
    }
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    expect(paid.status === 200 ? 200 : paid).toBe(200);
    expect(await transfersTo(app, payTo)).toHaveLength(1);
  }, 60_000);
});
