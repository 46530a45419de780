import type { Database } from '../src/db/database';

/**
 * Runs `statement` in a transaction of `database` held open for `heldMs`, starting `act` once it
 * ran: whether `act` waited for that transaction's commit, and how it ended. On PostgreSQL (PGlite
 * has one connection: there `act` would wait for the hold whatever it locks).
 */
export async function besideHeldChange<T>(
  database: Database,
  statement: string,
  params: unknown[],
  act: () => Promise<T>,
  heldMs = 400,
): Promise<{ waited: boolean; outcome: PromiseSettledResult<T> }> {
  let settled = false;
  let waited = false;
  let acting!: Promise<T>;
  await database.sql.transaction(async (tx) => {
    await tx.query(statement, params);
    acting = act().finally(() => (settled = true));
    acting.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, heldMs));
    waited = !settled;
  });
  const [outcome] = await Promise.allSettled([acting]);
  return { waited, outcome };
}
