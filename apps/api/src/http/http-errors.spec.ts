import { connect } from 'node:net';
import { registerPublisher } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('HTTP error handling', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { bodyLimitBytes: 4096 } });
  });
  afterAll(() => app.close());

  it('answers malformed JSON with 400 and a detail', async () => {
    const response = await app.call('POST', '/v1/publishers/register', { body: '{"email": ', rawBody: true });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: 'Request body is not valid JSON' });
  });

  it('answers an oversized body with 413 and a detail', async () => {
    const response = await app.call('POST', '/v1/publishers/register', {
      body: { email: 'a@example.com', password: 'x'.repeat(5000) },
    });
    expect(response.status).toBe(413);
    expect(response.body.detail).toMatch(/too large/);
  });

  it('answers a non-JSON content type with 415 and a detail', async () => {
    const response = await app.call('POST', '/v1/publishers/register', {
      body: 'email=a',
      rawBody: true,
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.status).toBe(415);
    expect(response.body.detail).toMatch(/application\/json/);
  });

  /** What the server answers these raw bytes, before it closes the connection. */
  const raw = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const { port } = new URL(app.baseUrl);
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(bytes));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });

  it('answers what Node refuses before any route (huge headers, a malformed request) with a detail', async () => {
    const huge = await raw(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.slice(huge.indexOf('\r\n\r\n') + 4))).toEqual({ detail: expect.stringMatching(/header/i) });
    const garbled = await raw('NOT A REQUEST\r\n\r\n');
    expect(garbled).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(garbled.slice(garbled.indexOf('\r\n\r\n') + 4))).toEqual({ detail: expect.any(String) });
    expect(garbled).toMatch(/cache-control: no-store/i);
  });

  it('answers an unknown route with 404 and a detail', async () => {
    const response = await app.call('GET', '/v1/nothing-here');
    expect(response.status).toBe(404);
    expect(response.body.detail).toMatch(/Cannot GET \/v1\/nothing-here/);
    // The query is not echoed (a key or password put there by mistake), nor is the answer kept by a cache.
    const undecodable = await app.call('GET', '/v1/%zz?site_token=st_secret_value');
    expect([undecodable.status, undecodable.headers.get('cache-control')]).toEqual([400, 'no-store']);
    const withQuery = await app.call('GET', '/v1/site/terms?site_token=st_secret_value&password=pw');
    expect([withQuery.status, withQuery.body.detail, withQuery.headers.get('cache-control')]).toEqual([
      404,
      'Cannot GET /v1/site/terms',
      'no-store',
    ]);
  });

  it('limits other endpoints to 100 a minute per credential, with Retry-After', async () => {
    const publisher = await registerPublisher(app);
    const other = await registerPublisher(app);
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++)
      statuses.push((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).status);
    expect(statuses.slice(0, 100).every((status) => status === 200)).toBe(true);
    const limited = await app.call('GET', '/v1/publishers/me', { headers: publisher.auth });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await app.call('GET', '/v1/publishers/me', { headers: other.auth })).status).toBe(200);
  });
});

describe('slow clients', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { requestTimeoutMs: 1_000 } });
  });
  afterAll(() => app.close());

  // Node's own limits are 60 s for headers and 300 s for a request: a close well under them is ours. The bound
  // leaves room for a loaded CI machine (the checks run every second; one run took 6.7 s).
  const OURS_MS = 15_000;

  /** Sends `bytes`, then nothing; what the server answered and how long it held the connection. */
  const stall = (bytes: string) =>
    new Promise<{ answer: string; heldMs: number }>((resolve, reject) => {
      const { port } = new URL(app.baseUrl);
      const started = Date.now();
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('close', () => resolve({ answer, heldMs: Date.now() - started }));
      socket.on('error', reject);
      setTimeout(() => socket.destroy(), OURS_MS + 5_000).unref();
    });

  it('closes a request whose body stops arriving, with 408 and a detail', async () => {
    const { answer, heldMs } = await stall(
      'POST /v1/publishers/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n\r\n{',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ detail: expect.any(String) });
    expect(heldMs).toBeLessThan(OURS_MS);
  });

  it('closes a request whose headers stop arriving', async () => {
    const { answer, heldMs } = await stall('GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(heldMs).toBeLessThan(OURS_MS);
  });
});
