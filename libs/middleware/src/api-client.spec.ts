import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiClient, CrawlgateApiError } from './api-client';

/** Loopback servers: one posing as the API that redirects every call, one where it points. */
async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('createApiClient: a redirecting API', () => {
  const seenElsewhere: IncomingHttpHeaders[] = [];
  let elsewhere: Awaited<ReturnType<typeof listen>>;
  let redirecting: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    elsewhere = await listen((request, response) => {
      seenElsewhere.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    redirecting = await listen((request, response) =>
      response.writeHead(307, { location: `${elsewhere.url}${request.url}` }).end(),
    );
  });
  afterAll(() => Promise.all([elsewhere, redirecting].map(({ server }) => new Promise((r) => server.close(r)))));

  const client = () => createApiClient({ apiUrl: redirecting.url, siteToken: 'cgst_secret', timeoutMs: 2000 });

  it('never follows it: the site token stays with the API, the call fails as no answer', async () => {
    const site = client().site();
    await expect(site).rejects.toBeInstanceOf(CrawlgateApiError);
    // Not the API's refusal (no error body): a payment it carried may have been acted on.
    await expect(site).rejects.toMatchObject({ status: undefined, message: expect.stringContaining('HTTP 307') });
    const verify = client().verify('gate', { x402Version: 2 }, 2000);
    await expect(verify).rejects.toMatchObject({ status: undefined, message: expect.stringContaining('HTTP 307') });
    expect(seenElsewhere).toEqual([]);
  });
});

describe('createApiClient: an API answering without end', () => {
  let endless: Awaited<ReturnType<typeof listen>>;
  let sentBytes = 0;
  beforeAll(async () => {
    // 1 MiB chunks, no content-length, until the client hangs up.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    endless = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const write = () => {
        while (!response.destroyed && response.write(chunk)) sentBytes += chunk.length;
        if (!response.destroyed) response.once('drain', write);
      };
      write();
    });
  });
  afterAll(() => new Promise((resolve) => endless.server.close(resolve)));

  it('stops reading past its cap and fails as no answer, well before the timeout', async () => {
    const started = Date.now();
    const site = createApiClient({ apiUrl: endless.url, siteToken: 'cgst_secret', timeoutMs: 20_000 }).site();
    await expect(site).rejects.toBeInstanceOf(CrawlgateApiError);
    await expect(site).rejects.toMatchObject({ status: undefined, message: expect.stringMatching(/larger than/) });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(sentBytes).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('createApiClient: answers that are not the API’s', () => {
  let status = 400;
  let body = '';
  let proxy: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    proxy = await listen((_request, response) => void response.writeHead(status).end(body));
  });
  afterAll(() => new Promise((resolve) => proxy.server.close(resolve)));
  const client = () => createApiClient({ apiUrl: proxy.url, siteToken: 'cgst_secret', timeoutMs: 2000 });

  it.each([
    [400, '<html>Bad Request</html>'],
    [401, ''],
    [404, '<html>Not Found</html>'],
    [409, '{"message":"conflict"}'],
    [422, ''],
    [429, '<html>Too Many Requests</html>'],
  ])(
    'takes a %i without the API’s error body as no answer, for a payment and a sign-in (the call may have been acted on)',
    async (answered, text) => {
      [status, body] = [answered, text];
      await expect(client().verify('gate', { x402Version: 2 }, 2000)).rejects.toMatchObject({ status: undefined });
      await expect(client().siwx({ proof: 'p', url: '/a' })).rejects.toMatchObject({ status: undefined });
    },
  );

  it('takes the API’s own refusals as refusals: a 422 listing problems, a 404, a 401', async () => {
    [status, body] = [422, JSON.stringify({ detail: [{ loc: ['body', 'payment'], msg: 'bad', type: 'x' }] })];
    await expect(client().verify('gate', { x402Version: 2 }, 2000)).rejects.toMatchObject({ status: 422 });
    [status, body] = [404, JSON.stringify({ detail: 'Gate not found or expired' })];
    await expect(client().verify('gate', { x402Version: 2 }, 2000)).resolves.toEqual({ kind: 'gone' });
    [status, body] = [401, JSON.stringify({ detail: 'Invalid proof' })];
    await expect(client().siwx({ proof: 'p', url: '/a' })).resolves.toBeNull();
  });

  it("takes the API's 429 to a payment as its answer (the rate limit took nothing; the payment may be settling from an earlier send)", async () => {
    [status, body] = [429, JSON.stringify({ detail: 'ThrottlerException: Too Many Requests' })];
    await expect(client().verify('gate', { x402Version: 2 }, 2000)).resolves.toEqual({
      kind: 'throttled',
      retryAfterSeconds: 5,
    });
  });
});

describe('createApiClient: the Retry-After of a settlement still pending', () => {
  let retryAfter: string | undefined;
  let api: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    api = await listen((_request, response) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
      const body = { status: 'settlement_pending', gate_id: 'gate', tx_hash: null, detail: 'sent' };
      response.writeHead(202, headers).end(JSON.stringify(body));
    });
  });
  afterAll(() => new Promise((resolve) => api.server.close(resolve)));
  const pendingFor = async (header: string | undefined) => {
    retryAfter = header;
    const client = createApiClient({ apiUrl: api.url, siteToken: 'cgst_secret', timeoutMs: 2000 });
    return client.verify('gate', { x402Version: 2 }, 2000);
  };

  it('reads it as RFC 9110 does (seconds, or an HTTP-date), as core’s parseRetryAfter', async () => {
    await expect(pendingFor('7')).resolves.toEqual({ kind: 'pending', retryAfterSeconds: 7 });
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    const answer = await pendingFor(inAMinute);
    expect(answer.kind === 'pending' && answer.retryAfterSeconds).toBeGreaterThanOrEqual(58);
    expect(answer.kind === 'pending' && answer.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it.each([undefined, '0', '-5', '1.5', 'soon', new Date(Date.now() - 60_000).toUTCString(), '9'.repeat(20)])(
    'asks for a few seconds when it is %p (absent, now, unreadable or past any wait)',
    async (header) => {
      await expect(pendingFor(header)).resolves.toEqual({ kind: 'pending', retryAfterSeconds: 5 });
    },
  );
});
