/*
 * The streamable HTTP transport on loopback: a real MCP client over HTTP, and the browser-borne
 * requests a local server that spends money must turn away (another site's Origin, a rebound Host).
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'node:http';
import { createWalletSession, readConfig, startHttpServer, type HttpServer } from '../../../libs/mcp/src';
import { envFor, fundedKey, startPaidSite, type PaidSite } from './support';

describe('crawlgate-mcp over streamable HTTP', () => {
  let site: PaidSite;
  let server: HttpServer;
  const logs: string[] = [];
  beforeAll(async () => {
    site = await startPaidSite();
    const session = createWalletSession(readConfig(envFor(site, await fundedKey(site))), {
      log: (line) => logs.push(line),
    });
    server = await startHttpServer(session, { port: 0 });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await site?.close();
  }, 60_000);

  async function httpClient(): Promise<Client> {
    const client = new Client({ name: 'http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${server.token}` } },
      }),
    );
    return client;
  }

  it('listens on 127.0.0.1 and serves the tools at /mcp', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await httpClient();
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
        'fetch_page',
        'quote_price',
        'spending',
      ]);
    } finally {
      await client.close();
    }
  });

  it('pays for a page, and every client of the server shares one budget', async () => {
    const before = (await site.transfers()).length;
    const first = await httpClient();
    const second = await httpClient();
    try {
      const page = await first.callTool({ name: 'fetch_page', arguments: { url: `${site.url}/cheap/over-http` } });
      expect(page.structuredContent).toMatchObject({
        status: 200,
        text: 'content of /cheap/over-http',
        paid: { price_usd: '0.001' },
      });
      expect((await site.transfers()).length).toBe(before + 1);
      // Another connection must not get a fresh budget: the limits are the wallet owner's, per server.
      expect((await second.callTool({ name: 'spending', arguments: {} })).structuredContent).toMatchObject({
        spent_usd: '0.001',
        payments: 1,
        remaining_usd: '0.999',
      });
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('turns away a browser page of another origin, and a request for another host (DNS rebinding)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${server.token}`,
    };
    expect(await post(server.url, body, { ...headers, origin: 'https://evil.example' })).toBe(403);
    expect(await post(server.url, body, { ...headers, host: 'evil.example' })).toBe(403);
    expect(await post(server.url, body, { ...headers, origin: new URL(server.url).origin })).not.toBe(403);
  });

  it('turns away any local process that does not send its token: none, another, or one a character short', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect(server.token.length).toBeGreaterThanOrEqual(32);
    for (const authorization of [
      undefined,
      'Bearer another-token-of-the-same-length-0123456',
      `Bearer ${server.token.slice(1)}`,
      server.token,
    ])
      expect(await post(server.url, body, authorization === undefined ? headers : { ...headers, authorization })).toBe(
        401,
      );
    expect(await post(server.url, body, { ...headers, authorization: `Bearer ${server.token}` })).toBe(200);
  });

  it('reads no body before the token, and never answers with a stack trace', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const unauthenticated = await postFor(server.url, '{bad', headers);
    expect(unauthenticated.status).toBe(401);
    const authenticated = await postFor(server.url, '{bad', { ...headers, authorization: `Bearer ${server.token}` });
    expect(authenticated.status).toBe(400);
    for (const answer of [unauthenticated, authenticated]) {
      expect(answer.body).not.toMatch(/at |node_modules|SyntaxError/);
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    }
  });

  it('takes a token it is given, refusing one too short to stand for the wallet', async () => {
    const session = createWalletSession(readConfig(envFor(site, await fundedKey(site, '0'))), { log: () => {} });
    await expect(startHttpServer(session, { port: 0, token: 'short' })).rejects.toThrow(/at least 32/);
    const given = await startHttpServer(session, { port: 0, token: 'x'.repeat(40) });
    try {
      expect(given.token).toBe('x'.repeat(40));
    } finally {
      await given.close();
    }
  });
});

/** A raw POST (fetch would not let us set Host); resolves to the status and the body. */
function postFor(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const post = async (url: string, body: string, headers: Record<string, string>) =>
  (await postFor(url, body, headers)).status;
