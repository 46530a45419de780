import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { isDatabaseUnavailable, isMissingRow } from './database-errors';
import { answerFor } from './exception.filter';

describe('isDatabaseUnavailable', () => {
  it('reads a full connection pool as unavailable (503), as the crawler-scale load test met it', () => {
    // pg-pool's own words when no connection frees up in time; they reached clients as 500s.
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(
      isDatabaseUnavailable(new Error('wrapped', { cause: new Error('timeout exceeded when trying to connect') })),
    ).toBe(true);
  });

  it('reads broken connections and server states as unavailable', () => {
    expect(
      isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    ).toBe(true);
    expect(
      isDatabaseUnavailable(
        Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      ),
    ).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('leaves every other error alone (an opaque 500)', () => {
    expect(isDatabaseUnavailable(new Error('duplicate key value violates unique constraint'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('Cannot read properties of undefined'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

describe('isMissingRow', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.dispose());

  const gone = randomUUID(); // a site deleted while the request ran
  const thrown = (work: () => Promise<unknown>) =>
    work().then(
      () => {
        throw new Error('the write went through');
      },
      (error: unknown) => error,
    );

  it('reads the errors of a write naming a deleted row as a 404, from raw SQL and Prisma alike', async () => {
    const errors = [
      await thrown(() =>
        db.database.sql.query(
          'INSERT INTO site_daily_counts (site_id, day, gates_created) VALUES ($1::uuid, current_date, 1)',
          [gone],
        ),
      ),
      await thrown(() =>
        db.database.prisma.priceRule.create({ data: { siteId: gone, position: 0, pattern: '/x', priceMicros: 1n } }),
      ),
      await thrown(() => db.database.prisma.site.update({ where: { id: gone }, data: { name: 'renamed' } })),
    ];
    for (const error of errors) {
      expect(isMissingRow(error)).toBe(true);
      expect(answerFor(error, { error: () => undefined })).toMatchObject({ status: 404 });
    }
  });

  it('leaves other write errors alone', async () => {
    expect(isMissingRow(new Error('duplicate key value violates unique constraint'))).toBe(false);
    expect(isMissingRow(Object.assign(new Error('unique'), { code: '23505' }))).toBe(false);
    expect(isMissingRow(undefined)).toBe(false);
  });
});
