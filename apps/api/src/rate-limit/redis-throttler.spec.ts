import { randomUUID } from 'node:crypto';
import { freshIp } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('rate limits shared through Redis', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    const redisPrefix = `crawlgate-test:${randomUUID()}:`;
    first = await startTestApp({ config: { redisUrl: REDIS_URL }, redisPrefix });
    second = await startTestApp({ config: { redisUrl: REDIS_URL }, redisPrefix, database: first.database });
  });
  afterAll(async () => {
    await second.app.close();
    await first.close();
  });

  it('hold across two API instances: 5 registrations a minute per IP in total', async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const instance = i % 2 === 0 ? first : second;
      statuses.push(
        (
          await instance.call('POST', '/v1/publishers/register', {
            body: { email: `r${i}-${ip}@example.com`, password: 'long enough pw' },
            headers: { 'x-forwarded-for': ip },
          })
        ).status,
      );
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect((await first.call('GET', '/v1/health')).body.rate_limits).toBe('redis');
  });

  it("keep one bucket's block out of another's reach: a tracker spelled as another's plus \":blocked\" blocks nothing", async () => {
    const ip = freshIp();
    const register = (as: string, i: number) =>
      first.call('POST', '/v1/publishers/register', {
        body: { email: `b${i}-${randomUUID()}@example.com`, password: 'long enough pw' },
        headers: { 'x-forwarded-for': as },
      });
    expect((await register(ip, 0)).status).toBe(201);
    // The storage once kept a bucket's block flag at its counter's key plus ":blocked".
    await register(`${ip}:blocked`, 1);
    expect((await register(ip, 2)).status).toBe(201);
  });
});
