import { isDatabaseUnavailable } from './database-errors';

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
