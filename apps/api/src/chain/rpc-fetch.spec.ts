import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, createWalletClient, http, keccak256 } from 'viem';
import { broadcastMayHaveLanded, isChainUnreachable } from '../payments/chain-errors';
import { BroadcastFailed, sendSignedFromRelayer } from './relayer-broadcast';
import type { ChainContext } from './chain-context';
import { createRpcFetch } from './rpc-fetch';

/** A loopback HTTP server whose answer each test decides; counts the connections it accepted. */
async function serve(handle: (request: IncomingMessage, body: string, response: ServerResponse) => void) {
  let connections = 0;
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => handle(request, body, response));
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const rpcResult = (result: unknown) => (request: IncomingMessage, body: string, response: ServerResponse) => {
  const calls = JSON.parse(body);
  const answer = Array.isArray(calls)
    ? calls.map((call) => ({ jsonrpc: '2.0', id: call.id, result }))
    : { jsonrpc: '2.0', id: calls.id, result };
  response
    .writeHead(200, { 'content-type': 'application/json', 'x-seen-method': request.method! })
    .end(JSON.stringify(answer));
};

describe('createRpcFetch', () => {
  const rpcFetch = createRpcFetch();

  it('sends the body and headers, and hands back status, headers and body', async () => {
    const server = await serve((request, body, response) =>
      response
        .writeHead(201, { 'x-echo': String(request.headers['x-test']), 'set-cookie': ['a=1', 'b=2'] })
        .end(`${request.method} ${body}`),
    );
    try {
      const response = await rpcFetch(server.url, { method: 'POST', headers: { 'x-test': 'yes' }, body: '{"ü":1}' });
      expect(response.status).toBe(201);
      expect(response.headers.get('x-echo')).toBe('yes');
      expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
      expect(await response.text()).toBe('POST {"ü":1}');
    } finally {
      await server.close();
    }
  });

  it('serves viem: single and batched JSON-RPC calls, over one kept-alive connection', async () => {
    const server = await serve(rpcResult('0x7a69'));
    try {
      const client = createPublicClient({ transport: http(server.url, { fetchFn: rpcFetch, batch: true }) });
      expect(await client.getChainId()).toBe(31337);
      expect(await Promise.all([client.getChainId(), client.getChainId(), client.getChainId()])).toEqual([
        31337, 31337, 31337,
      ]);
      expect(await client.getChainId()).toBe(31337);
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('passes a non-2xx answer on, which viem reports as an HttpRequestError with its status', async () => {
    const server = await serve((_, __, response) =>
      response.writeHead(500, { 'content-type': 'text/plain' }).end('boom'),
    );
    try {
      const client = createPublicClient({ transport: http(server.url, { fetchFn: rpcFetch, retryCount: 0 }) });
      const failure = await client.getChainId().catch((error: unknown) => error);
      expect(failure).toMatchObject({ name: 'HttpRequestError', status: 500 });
    } finally {
      await server.close();
    }
  });

  /** Any signed transaction: the servers here answer without reading it. */
  const signed = '0x02f86b827a6980843b9aca00850ba43b7400825208940000000000000000000000000000000000000001808080c0';
  /** The relayer's broadcast of `signed` to `url`, as the API sends it; what it failed with. */
  async function failedBroadcastTo(url: string, timeout = 10_000): Promise<unknown> {
    const relayer = createWalletClient({ transport: http(url, { fetchFn: rpcFetch, retryCount: 0, timeout }) });
    return sendSignedFromRelayer({ relayer } as unknown as ChainContext, signed).then(
      (hash) => new Error(`the broadcast got ${hash}`),
      (error: unknown) => error,
    );
  }

  it('keeps node’s error when nothing listens: unreachable, and a broadcast that cannot have landed', async () => {
    const server = await serve(rpcResult('0x1'));
    const url = server.url;
    await server.close();
    const failure = await failedBroadcastTo(url);
    expect(failure).toBeInstanceOf(BroadcastFailed);
    expect(JSON.stringify(failure, ['cause', 'code', 'syscall'])).toMatch(/ECONNREFUSED/);
    expect(isChainUnreachable(failure)).toBe(true);
    expect(broadcastMayHaveLanded(failure)).toBe(false);
  });

  it('reports a connection cut after the broadcast arrived as one that may have landed, with its hash', async () => {
    const server = await serve((request) => request.socket.destroy());
    try {
      const failure = await failedBroadcastTo(server.url);
      expect(isChainUnreachable(failure)).toBe(true);
      expect(broadcastMayHaveLanded(failure)).toBe(true);
      expect((failure as BroadcastFailed).hash).toBe(keccak256(signed));
    } finally {
      await server.close();
    }
  });

  it('reports a broadcast whose answer never came (viem’s TimeoutError, no body, no cause) as one that may have landed', async () => {
    const held: ServerResponse[] = [];
    const server = await serve((_, __, response) => held.push(response));
    try {
      const failure = await failedBroadcastTo(server.url, 100);
      expect((failure as Error).cause).toMatchObject({ name: 'TimeoutError' });
      expect(isChainUnreachable(failure)).toBe(true);
      expect(broadcastMayHaveLanded(failure)).toBe(true);
    } finally {
      held.forEach((response) => response.destroy());
      await server.close();
    }
  });

  it.each([200, 502])(
    'reports a gateway’s JSON-RPC error for the broadcast (HTTP %i, -32603 "socket hang up" upstream) as one that may have landed',
    async (status) => {
      const server = await serve((_, body, response) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: JSON.parse(body).id,
            error: { code: -32603, message: 'upstream request failed: socket hang up' },
          }),
        ),
      );
      try {
        const failure = await failedBroadcastTo(server.url);
        expect(isChainUnreachable(failure)).toBe(true);
        expect(broadcastMayHaveLanded(failure)).toBe(true);
      } finally {
        await server.close();
      }
    },
  );

  it('gives up when viem’s timeout passes, with viem’s TimeoutError; a read that timed out before any broadcast sent nothing', async () => {
    const held: ServerResponse[] = [];
    const server = await serve((_, __, response) => held.push(response));
    try {
      const client = createPublicClient({
        transport: http(server.url, { fetchFn: rpcFetch, retryCount: 0, timeout: 100 }),
      });
      const failure = await client.getChainId().catch((error: unknown) => error);
      expect(isChainUnreachable(failure)).toBe(true);
      expect(String((failure as Error).message)).toMatch(/timed out/i);
      // The nonce or gas read of a settlement, say: nothing was sent.
      expect(broadcastMayHaveLanded(failure)).toBe(false);
    } finally {
      held.forEach((response) => response.destroy());
      await server.close();
    }
  });

  it('rejects with the abort reason of a signal aborted by the caller', async () => {
    const held: ServerResponse[] = [];
    const server = await serve((_, __, response) => held.push(response));
    try {
      const controller = new AbortController();
      const pending = rpcFetch(server.url, { method: 'POST', body: '{}', signal: controller.signal });
      setTimeout(() => controller.abort(new Error('caller gave up')), 20);
      await expect(pending).rejects.toThrow('caller gave up');
    } finally {
      held.forEach((response) => response.destroy());
      await server.close();
    }
  });

  it('refuses URLs that are not http(s)', async () => {
    await expect(rpcFetch('ws://127.0.0.1:1/', { method: 'POST', body: '{}' })).rejects.toThrow(/not supported/);
  });
});
