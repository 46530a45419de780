/*
 * The streamable HTTP transport, on 127.0.0.1 only: whoever can reach this server spends the
 * wallet's budget, so it is for MCP hosts on the same machine. Two browser-borne attacks are
 * refused: a page on another site posting to it (its Origin is not loopback) and DNS rebinding
 * (a Host that is not loopback; the SDK's Express app checks that).
 *
 * Loopback is not "this user": any process of the machine reaches it. So every request must carry
 * the server's bearer token (`Authorization: Bearer <token>`), given or generated at start; the
 * Origin and the token are checked before the MCP app reads the body.
 *
 * Stateless: every POST gets a fresh MCP server and transport, all sharing the one wallet session,
 * so there is no per-connection state to keep, and no connection gets a budget of its own.
 */

import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { NextFunction, Request, Response } from 'express';
import { constantTimeEqual } from '@crawlgate/core';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MIN_HTTP_TOKEN_LENGTH } from './config';
import { createMcpServer } from './server';
import type { WalletSession } from './session';

export interface HttpServer {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  /** What every request must send as `Authorization: Bearer <token>`. */
  token: string;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Listens on 127.0.0.1:`port` (0: any free port; `url` says which), for requests bearing `token` (default: a random one). */
export async function startHttpServer(
  session: WalletSession,
  { port, token = randomBytes(32).toString('base64url') }: { port: number; token?: string },
): Promise<HttpServer> {
  if (token.length < MIN_HTTP_TOKEN_LENGTH)
    throw new RangeError(`startHttpServer: the token must be at least ${MIN_HTTP_TOKEN_LENGTH} characters`);
  const app = createMcpExpressApp({ host: HOST });
  app.post('/mcp', async (req: Request, res: Response) => {
    const server = createMcpServer(session);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      session.log(`crawlgate-mcp: HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.status(500).json(rpcError(-32603, 'Internal server error'));
    }
  });
  // Stateless: no server-sent stream to open (GET) and no session to end (DELETE).
  app.all(
    '/mcp',
    (_req: Request, res: Response) =>
      void res
        .status(405)
        .set('allow', 'POST')
        .json(rpcError(-32000, 'Method not allowed: POST MCP messages to this URL')),
  );

  // A parse error of an authenticated request: JSON-RPC's, never Express's page with a stack trace.
  app.use((error: { status?: number }, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(error);
    res.status(error.status ?? 400).json(rpcError(-32700, 'Parse error: the body is not a JSON-RPC message'));
  });

  // Origin and token are checked before Express reads a byte of the body.
  const admit = admission(token);
  const listener = createServer((req, res) => {
    const refused = admit(req);
    if (!refused) return void app(req, res);
    req.resume();
    res.writeHead(refused.status, { 'content-type': 'application/json', ...refused.headers });
    res.end(JSON.stringify(rpcError(refused.code, refused.message)));
  }).listen(port, HOST);
  await new Promise<void>((resolve, reject) => {
    listener.once('listening', resolve);
    listener.once('error', reject);
  });
  return {
    url: `http://${HOST}:${(listener.address() as AddressInfo).port}/mcp`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        listener.close(() => resolve());
        listener.closeAllConnections();
      }),
  };
}

interface Refusal {
  status: number;
  code: number;
  message: string;
  headers?: Record<string, string>;
}

/**
 * Why a request is turned away before it reaches the MCP app, if it is: a browser sends a page's
 * Origin, and only pages on this machine may talk to us; every request must bear the token,
 * compared in constant time.
 */
function admission(token: string): (req: IncomingMessage) => Refusal | undefined {
  const expected = new TextEncoder().encode(`Bearer ${token}`);
  return (req) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !(URL.canParse(origin) && LOOPBACK.has(new URL(origin).hostname)))
      return { status: 403, code: -32000, message: `Origin ${origin} may not use this server` };
    const given = req.headers.authorization;
    if (typeof given === 'string' && constantTimeEqual(new TextEncoder().encode(given), expected)) return undefined;
    return {
      status: 401,
      code: -32001,
      message: 'Send Authorization: Bearer <the token crawlgate-mcp printed when it started>',
      headers: { 'www-authenticate': 'Bearer' },
    };
  };
}

function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}
