import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { freshIp, registerPublisher, type TestPublisher } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';
import { startTcpProxy, type TcpProxy } from '../../test/tcp-proxy';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Redis going away and coming back with REDIS_URL set', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let publisher: TestPublisher;
  let redis: Redis;
  const redisPrefix = `crawlgate-test:${randomUUID()}:`;
  // The app logs through Nest's Logger; this sees every call whatever the (silent) test log level.
  const warnings = jest.spyOn(Logger.prototype, 'warn');
  const notes = jest.spyOn(Logger.prototype, 'log');

  beforeAll(async () => {
    const server = new URL(REDIS_URL);
    proxy = await startTcpProxy(server.hostname, Number(server.port || 6379));
    const proxied = new URL(REDIS_URL);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    app = await startTestApp({ config: { redisUrl: proxied.toString() }, redisPrefix });
    publisher = await registerPublisher(app);
    redis = new Redis(REDIS_URL, { lazyConnect: true });
    await redis.connect();
  });
  afterAll(async () => {
    await proxy.restore();
    await app.close();
    await proxy.close();
    redis.disconnect();
    warnings.mockRestore();
    notes.mockRestore();
  });

  const health = async () => (await app.call('GET', '/v1/health')).body;
  const register = (ip: string) =>
    app.call('POST', '/v1/publishers/register', {
      body: { email: `${randomUUID()}@example.com`, password: 'long enough pw' },
      headers: { 'x-forwarded-for': ip },
    });
  const messages = (spy: jest.SpyInstance) => spy.mock.calls.map(([message]) => String(message));

  async function until(condition: () => Promise<boolean>, limitMs = 5_000): Promise<void> {
    for (const started = Date.now(); !(await condition()); await sleep(100)) {
      if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    }
  }

  it('keeps serving on per-process limits while Redis is down, says so in logs and health, and shares limits again once it is back', async () => {
    expect(await health()).toMatchObject({ status: 'ok', rate_limits: 'redis' });

    await proxy.cut();
    expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);
    // Still limited, per process: 5 registrations a minute per IP.
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await register(ip)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect(await health()).toMatchObject({
      status: 'degraded',
      database: { status: 'up' },
      rate_limits: 'in-process-fallback',
    });
    expect(messages(warnings).filter((m) => /Redis unavailable, rate limits are per process/.test(m))).toHaveLength(1);
    expect((await app.call('GET', '/v1/health')).status).toBe(200);

    await proxy.restore();
    await until(async () => (await health()).rate_limits === 'redis');
    expect(await health()).toMatchObject({ status: 'ok', rate_limits: 'redis' });
    expect(messages(notes).some((m) => /Redis is back/.test(m))).toBe(true);
    // Counted in Redis again, where other instances see it (a new IP is a new counter, and its
    // network another: PASSWORD_ROUTES_PER_NETWORK).
    const counters = (await redis.keys(`${redisPrefix}*`)).length;
    expect((await register(freshIp())).status).toBe(201);
    expect((await redis.keys(`${redisPrefix}*`)).length).toBe(counters + 2);
  });

  it('reports a Redis lost while idle, and back, without waiting for a request to find out', async () => {
    warnings.mockClear();
    await proxy.cut();
    await until(async () => (await health()).rate_limits === 'in-process-fallback');
    expect(messages(warnings).filter((m) => /Redis unavailable/.test(m))).toHaveLength(1);
    await proxy.restore();
    await until(async () => (await health()).rate_limits === 'redis');
  });
});

describe('a Redis that is connected but does not answer', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let publisher: TestPublisher;
  /** While set, every answer from Redis is held (a paused or blackholed server: the socket stays open). */
  let stalled: Promise<void> | undefined;
  let release = () => undefined as void;

  beforeAll(async () => {
    const server = new URL(REDIS_URL);
    proxy = await startTcpProxy(server.hostname, Number(server.port || 6379), {
      tap: (_chunk, direction) => (direction === 'to-client' ? stalled : undefined),
    });
    const proxied = new URL(REDIS_URL);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    app = await startTestApp({
      config: { redisUrl: proxied.toString() },
      redisPrefix: `crawlgate-test:${randomUUID()}:`,
    });
    publisher = await registerPublisher(app);
  }, 60_000);
  afterAll(async () => {
    release();
    await app?.close();
    await proxy?.close();
  }, 60_000);

  it('answers throttled requests on per-process limits, says so in health, and shares limits again once Redis answers', async () => {
    expect((await app.call('GET', '/v1/health')).body).toMatchObject({ rate_limits: 'redis' });
    stalled = new Promise<void>((resolve) => (release = resolve));
    // Before: no answer at all while Redis was silent (the throttler waited on it without a limit).
    for (let i = 0; i < 3; i++)
      expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status).toBe(200);
    expect((await app.call('GET', '/v1/health')).body).toMatchObject({
      status: 'degraded',
      rate_limits: 'in-process-fallback',
    });
    stalled = undefined;
    release();
    for (const started = Date.now(); ; await sleep(200)) {
      await app.call('GET', '/v1/publishers/me', { headers: publisher.auth });
      if ((await app.call('GET', '/v1/health')).body.rate_limits === 'redis') break;
      if (Date.now() - started > 20_000) throw new Error('rate limits were not shared again within 20 s');
    }
  }, 60_000);
});
