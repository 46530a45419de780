import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, PublisherClient, TimeoutError, type FetchLike } from '@crawlgate/publisher';
import { generateSiteToken } from '@crawlgate/core';
import { refusingUrl } from './support';

/*
 * Retries and timeouts against a tiny scripted server on loopback: each request takes the next
 * answer from the script, so the tests are fast and deterministic.
 */

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
const hang: Answer = () => undefined;

const ME = {
  publisher_id: '6f1c0e0a-0000-4000-8000-000000000000',
  email: 'a@example.com',
  name: null,
  payout_address: null,
  created_at: '2026-01-01T00:00:00.000Z',
};

describe('retries and timeouts', () => {
  let server: Server;
  let apiUrl: string;
  let script: Answer[];
  let seen: { method: string; url: string; at: number; headers: IncomingMessage['headers'] }[];

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ method: request.method!, url: request.url!, at: Date.now(), headers: request.headers });
      request.resume();
      // No keep-alive: a pooled socket closed by one test must not fail the next one's first request.
      response.setHeader('connection', 'close');
      (script.shift() ?? json(500, { detail: 'script exhausted' }))(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    script = [];
    seen = [];
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const client = (options: Partial<ConstructorParameters<typeof PublisherClient>[0]> = {}) =>
    new PublisherClient({ apiUrl, apiKey: 'xk_pub_test', ...options });

  it('never follows a redirect: the API key is sent to the API only', async () => {
    const elsewhere: Answer = (_request, response) =>
      response.writeHead(307, { location: `${apiUrl}/elsewhere/me` }).end();
    script = [elsewhere, json(200, ME)];
    await expect(client().me()).rejects.toMatchObject({
      name: 'ApiError',
      status: 307,
      // Where it led, so a wrong apiUrl (the website's, say) is found.
      message: `HTTP 307 Temporary Redirect to ${apiUrl}/elsewhere/me: the API never redirects; is ${apiUrl}/v1 the API?`,
    });
    expect(seen.map((request) => request.url)).toEqual(['/v1/publishers/me']);
  });

  it('retries a 429 after its Retry-After, then succeeds', async () => {
    script = [json(429, { detail: 'Rate limit exceeded' }, { 'retry-after': '1' }), json(200, ME)];
    expect(await client().me()).toEqual(ME);
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/publishers/me', 'GET /v1/publishers/me']);
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(950);
    expect(seen[1].headers.authorization).toBe('Bearer xk_pub_test');
  });

  it('retries a 429 of a POST too: the server refused it before doing anything', async () => {
    script = [json(429, { detail: 'Rate limit exceeded' }, { 'retry-after': '0' }), json(200, { rules_applied: 0 })];
    expect(await client().setPricing('s1', { default_price_usd: '0' })).toEqual({ rules_applied: 0 });
    expect(seen.map((r) => r.method)).toEqual(['PUT', 'PUT']);
  });

  it('gives up after maxRetries with a 429 ApiError carrying retryAfter', async () => {
    script = [0, 1, 2].map(() => json(429, { detail: 'Rate limit exceeded' }, { 'retry-after': '0' }));
    const error = await client({ maxRetries: 2 })
      .me()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, detail: 'Rate limit exceeded', retryAfter: 0 });
    expect(seen).toHaveLength(3);
  });

  it('does not wait out a Retry-After longer than maxRetryWaitMs', async () => {
    script = [json(429, { detail: 'Rate limit exceeded' }, { 'retry-after': '60' })];
    const started = Date.now();
    const error = await client()
      .me()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryAfter: 60 });
    expect(seen).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('does not retry other errors', async () => {
    script = [json(503, { detail: 'The database is unavailable; try again shortly' }, { 'retry-after': '5' })];
    const error = await client()
      .me()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 503,
      detail: 'The database is unavailable; try again shortly',
      retryAfter: 5,
    });
    expect(seen).toHaveLength(1);
  });

  it('times out with a TimeoutError (status 0), without retrying', async () => {
    script = [hang, hang];
    const started = Date.now();
    const error = await client({ timeoutMs: 200 })
      .getSite('s1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ name: 'TimeoutError', status: 0, detail: 'No answer within 200 ms: GET /sites/s1' });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(seen).toHaveLength(1);
  });

  it('explains a non-JSON error answer by its status', async () => {
    script = [
      (_request, response) =>
        response.writeHead(502, 'Bad Gateway', { 'content-type': 'text/html' }).end('<html>oops</html>'),
    ];
    const error = await client()
      .me()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, detail: 'HTTP 502 Bad Gateway', body: '<html>oops</html>' });
  });

  describe('network failures', () => {
    // A fetch that fails like Node's does when nothing listens, counting its calls.
    const refusing = () => {
      const calls: string[] = [];
      const fetch: FetchLike = async (_input, init) => {
        calls.push(init.method ?? 'GET');
        throw new TypeError('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        });
      };
      return { calls, fetch };
    };

    it('are retried for GETs, then reported as status 0', async () => {
      const { calls, fetch } = refusing();
      const error = await client({ fetch })
        .listSites()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).not.toBeInstanceOf(TimeoutError);
      expect(error).toMatchObject({ status: 0, detail: `Could not reach ${apiUrl}/v1: ECONNREFUSED` });
      expect(calls).toEqual(['GET', 'GET', 'GET']);
    });

    it('are not retried for other methods: the server may have acted', async () => {
      const { calls, fetch } = refusing();
      await expect(client({ fetch }).createSite({ domain: 'example.com' })).rejects.toMatchObject({ status: 0 });
      expect(calls).toEqual(['POST']);
    });

    it('with a real closed port', async () => {
      const error = await new PublisherClient({ apiUrl: await refusingUrl(), maxRetries: 0 })
        .me()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 0, detail: expect.stringMatching(/^Could not reach .*ECONNREFUSED/) });
    });
  });

  it('sends JSON bodies with content-type, and no content-type without a body', async () => {
    script = [json(200, { site_id: 's1', site_token: generateSiteToken() }), json(200, { rules_applied: 1 })];
    await client().rotateSiteToken('s1');
    await client().setPricing('s1', { default_price_usd: '0.01', rules: [{ path: '/a', price_usd: 0 }] });
    expect(seen[0].headers['content-type']).toBeUndefined();
    expect(seen[1].headers['content-type']).toBe('application/json');
  });
});
