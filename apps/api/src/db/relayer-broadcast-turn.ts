import { RelayerTurnNotHad, type AcrossInstances } from '../chain/relayer-nonces';
import type { ChainConfig } from '../config/config';
import type { Database } from './database';
import { isLockNotAvailable } from './prisma-errors';

/** The advisory lock of the relayer's broadcasts (Prisma Migrate's id + 3, beside JOB_LOCKS). */
export const RELAYER_BROADCAST_LOCK = 72707372;

/**
 * How long a broadcast waits for another instance's: that one is an RPC call (RPC_TIMEOUT_MS at
 * most) and its hash written to the database.
 */
export const relayerTurnWaitMs = (chain: Pick<ChainConfig, 'rpcTimeoutMs'>) => 2 * chain.rpcTimeoutMs;

/** PGlite belongs to one process: its apps (the tests' instances) take turns in it, a broadcast at a time. */
const turnsInProcess = new WeakMap<Database, Promise<unknown>>();

/**
 * The relayer's broadcasts of every API instance on `db`, one at a time (AcrossInstances): on
 * PostgreSQL a transaction's advisory lock of this deployment (its schema, as JOB_LOCKS), waited
 * for at most `waitMs`. What the broadcast did is its caller's to know whatever happens to the
 * transaction after it: a commit that fails once the node has the transaction is not its failure
 * (the lock goes with the transaction either way).
 */
export function relayerBroadcastTurn(db: Database, waitMs: number): AcrossInstances {
  if (db.kind === 'pglite') return (work) => inProcessTurn(db, work);
  return async (work) => {
    let outcome: { value: unknown } | { error: unknown } | undefined;
    try {
      await db.sql.transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = ${Math.trunc(waitMs)}`);
        // Held through the broadcast, however long it takes: a server ending sessions idle in a
        // transaction would end the turn with it, and another instance read the same nonce.
        await tx.query('SET LOCAL idle_in_transaction_session_timeout = 0');
        await tx.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [RELAYER_BROADCAST_LOCK, db.schema]);
        outcome = await work().then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
      });
    } catch (error) {
      if (!outcome) throw turnNotHad(error, waitMs);
    }
    if ('error' in outcome!) throw outcome.error;
    return outcome!.value as never;
  };
}

function turnNotHad(error: unknown, waitMs: number): RelayerTurnNotHad {
  return new RelayerTurnNotHad(
    isLockNotAvailable(error)
      ? `another API instance held the relayer’s turn to broadcast for over ${waitMs} ms`
      : 'the database did not give the relayer its turn to broadcast',
    error,
  );
}

function inProcessTurn<T>(db: Database, work: () => Promise<T>): Promise<T> {
  const before = turnsInProcess.get(db) ?? Promise.resolve();
  const mine = before.then(work, work);
  turnsInProcess.set(
    db,
    mine.catch(() => undefined),
  );
  return mine;
}
