import { pricedSite, type TestPublisher, type TestSite } from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type CallResult, type TestApp } from '../../test/test-app';
import { createProxiedTestDatabase, type TestDatabase } from '../../test/test-database';
import type { TcpProxy } from '../../test/tcp-proxy';

// An outage needs a server to lose, so this file runs on PostgreSQL even on a PGlite run.
/** No request may take longer than this while the database is gone. */
const ANSWER_BOUND_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Phase = 'up' | 'down' | 'recovering' | 'back';

interface Answer {
  /** The phase when the request was sent and when its answer came: only 'down' at both means it met no database. */
  phase: Phase;
  endPhase: Phase;
  status: number;
  ms: number;
  body: unknown;
  retryAfter: string | null;
}

describe('PostgreSQL going away and coming back (the same app instance throughout)', () => {
  let proxy: TcpProxy;
  let db: TestDatabase;
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  /** What the next statement sent to PostgreSQL meets; a test sets it to cut at an exact moment. */
  let onStatement: ((sql: string) => boolean | void) | undefined;

  beforeAll(async () => {
    ({ db, proxy } = await createProxiedTestDatabase((chunk, direction) =>
      direction === 'to-target' ? onStatement?.(chunk.toString('latin1')) : undefined,
    ));
    app = await startTestApp({ database: db.database });
    ({ publisher, site } = await pricedSite(app, newWallet().address));
  });
  afterAll(async () => {
    await proxy.restore();
    await app.close();
    await db.dispose();
    await proxy.close();
  });
  afterEach(() => proxy.restore());

  /** Polls until the app serves a database read again; returns how long that took. */
  async function untilServing(limitMs = 5_000): Promise<number> {
    const started = performance.now();
    while ((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status !== 200) {
      if (performance.now() - started > limitMs)
        throw new Error(`not serving ${limitMs} ms after the database came back`);
      await sleep(100);
    }
    return performance.now() - started;
  }

  it('answers 503 {detail} while it is down, never 500 or a hang, and serves again once it is back', async () => {
    let phase: Phase = 'up';
    const answers: Answer[] = [];
    let running = true;
    const loop = async (paceMs: number, request: () => Promise<CallResult>) => {
      while (running) {
        const at = phase;
        const started = performance.now();
        const { status, body, headers } = await request();
        answers.push({
          phase: at,
          endPhase: phase,
          status,
          ms: performance.now() - started,
          body,
          retryAfter: headers.get('retry-after'),
        });
        await sleep(paceMs);
      }
    };
    // Light load within the rate limits (100 a minute per API key, 200 per site token).
    const load = Promise.all([
      loop(120, () => app.call('GET', '/v1/publishers/me', { headers: publisher.auth })),
      loop(60, () =>
        app.call('POST', '/v1/gates', {
          body: { url: `/load/${Math.random()}` },
          headers: { 'x-site-token': site.siteToken },
        }),
      ),
    ]);

    await sleep(500);
    await proxy.cut();
    phase = 'down';
    await sleep(1_500);
    const health = await app.call('GET', '/v1/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unavailable', database: { status: 'down', kind: 'postgres' } });

    // Before restore(), so that any request still in flight then is not counted as met by an outage.
    phase = 'recovering';
    await proxy.restore();
    expect(await untilServing()).toBeLessThan(3_000);
    phase = 'back';
    await sleep(500);
    running = false;
    await load;

    const ok = (answer: Answer) => answer.status === 200 || answer.status === 402;
    const unavailable = (answer: Answer) =>
      answer.status === 503 &&
      typeof (answer.body as { detail?: unknown }).detail === 'string' &&
      answer.retryAfter === '5';
    const during = answers.filter((a) => a.phase === 'down' && a.endPhase === 'down');
    expect(during.length).toBeGreaterThan(10);
    expect(during.filter((a) => !unavailable(a))).toEqual([]);
    // Requests in flight at the moment of the cut or of the return get one or the other.
    expect(answers.filter((a) => !during.includes(a) && a.phase !== 'back' && !ok(a) && !unavailable(a))).toEqual([]);
    expect(answers.filter((a) => a.phase === 'back' && !ok(a))).toEqual([]);
    expect(answers.filter((a) => a.phase === 'back').length).toBeGreaterThan(3);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(ANSWER_BOUND_MS);

    const healthy = await app.call('GET', '/v1/health');
    expect(healthy.status).toBe(200);
    expect(healthy.body).toMatchObject({ status: 'ok', database: { status: 'up' } });
  });

  it('applies a pricing change fully or not at all: cut mid-transaction, it is rolled back', async () => {
    const pricing = `/v1/sites/${site.siteId}/pricing`;
    const before = (await app.call('GET', pricing, { headers: publisher.auth })).body;
    const change = {
      default_price_usd: '0.05',
      rules: Array.from({ length: 50 }, (_, i) => ({ path: `/section-${i}/*`, price_usd: '0.002' })),
    };

    // Let the DELETE of the old rules through, then lose the server as the new rules are sent.
    const sent: string[] = [];
    onStatement = (sql) => {
      if (!sql.includes('price_rules')) return;
      sent.push(sql.includes('DELETE') ? 'delete' : sql.includes('INSERT') ? 'insert' : 'other');
      if (sent.at(-1) !== 'insert') return;
      onStatement = undefined;
      void proxy.cut();
      return false;
    };
    const cutMidway = await app.call('PUT', pricing, { body: change, headers: publisher.auth });
    expect(sent).toEqual(['delete', 'insert']);
    expect(cutMidway.status).toBe(503);
    expect(cutMidway.body.detail).toEqual(expect.any(String));
    await proxy.restore();
    await untilServing();
    expect((await app.call('GET', pricing, { headers: publisher.auth })).body).toEqual(before);

    // Sent while the database is down: refused whole.
    await proxy.cut();
    expect((await app.call('PUT', pricing, { body: change, headers: publisher.auth })).status).toBe(503);
    await proxy.restore();
    await untilServing();
    expect((await app.call('GET', pricing, { headers: publisher.auth })).body).toEqual(before);

    // And once it is back, the same change applies whole.
    expect((await app.call('PUT', pricing, { body: change, headers: publisher.auth })).status).toBe(200);
    const after = (await app.call('GET', pricing, { headers: publisher.auth })).body;
    expect(after).toMatchObject({ default_price_usd: '0.05', version: before.version + 1 });
    expect(after.rules).toHaveLength(50);
  });
});
