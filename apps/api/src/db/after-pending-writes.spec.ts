import { Pool } from 'pg';
import { afterPendingWrites } from './after-pending-writes';
import { pgDriver } from './sql-driver';

/** Busy for `ms` without yielding: CPU work such as a signature's recovery. */
function holdCpu(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('afterPendingWrites', () => {
  it('resolves once what was queued before it has run: ticks, promise jobs and immediates', async () => {
    const ran: string[] = [];
    process.nextTick(() => ran.push('tick'));
    setImmediate(() => ran.push('immediate'));
    void Promise.resolve().then(() => ran.push('job'));
    await afterPendingWrites();
    expect(ran.sort()).toEqual(['immediate', 'job', 'tick']);
  });

  describe('on PostgreSQL', () => {
    // The suites' PostgreSQL run only: `npm test` runs on the embedded database, with no server to ask.
    const onPostgres = process.env.DATABASE_URL ? it : it.skip;
    const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
    const sql = pgDriver(pool);
    afterAll(() => pool.end());

    /** How long a 300 ms query takes when 300 ms of CPU run after it is started, with or without the wait between. */
    async function queryBeside(cpu: () => Promise<void>): Promise<number> {
      await sql.query('SELECT 1'); // a connection ready in the pool, as on a running API
      const started = performance.now();
      const query = sql.query('SELECT pg_sleep(0.3)');
      await cpu();
      await query;
      return performance.now() - started;
    }

    onPostgres(
      'lets a query started before it go out, so CPU work after it runs while the database answers',
      async () => {
        const overlapped = await queryBeside(async () => {
          await afterPendingWrites();
          holdCpu(300);
        });
        const heldBack = await queryBeside(async () => holdCpu(300));
        // Side by side about 300 ms; one after the other at least 600.
        expect(overlapped).toBeLessThan(500);
        expect(heldBack).toBeGreaterThanOrEqual(600);
      },
    );
  });
});
