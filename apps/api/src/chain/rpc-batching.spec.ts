import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http } from 'viem';
import { isChainUnreachable } from '../payments/chain-errors';
import { batchingRpcFetch } from './rpc-batching';
import { createRpcFetch } from './rpc-fetch';

/** A loopback JSON-RPC server whose answer each test decides; records every request body it got. */
async function serve(answer: (calls: any, response: ServerResponse, request: IncomingMessage) => void) {
  const bodies: any[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      bodies.push(JSON.parse(body));
      answer(JSON.parse(body), response, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const json = (response: ServerResponse, value: unknown, status = 200) =>
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));

/** Answers each call with its method's name and params, so a mixed-up answer shows. */
const echo = (calls: any, response: ServerResponse) =>
  json(
    response,
    Array.isArray(calls)
      ? calls.map((call) => ({ jsonrpc: '2.0', id: call.id, result: `${call.method}:${call.params?.[0]}` }))
      : { jsonrpc: '2.0', id: calls.id, result: `${calls.method}:${calls.params?.[0]}` },
  );

const call = (fetchFn: typeof fetch, url: string, id: unknown, method: string, param?: string, signal?: AbortSignal) =>
  fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: param === undefined ? [] : [param] }),
    signal,
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));

describe('batchingRpcFetch', () => {
  const rpcFetch = batchingRpcFetch(createRpcFetch());

  it('sends the calls made together as one batch, and gives each caller its own answer under its own id', async () => {
    const server = await serve(echo);
    try {
      // Callers' ids need not differ: two of these are 7.
      const answers = await Promise.all([
        call(rpcFetch, server.url, 7, 'eth_a', 'x'),
        call(rpcFetch, server.url, 7, 'eth_b', 'y'),
        call(rpcFetch, server.url, 'z', 'eth_c', 'z'),
      ]);
      expect(answers.map((answer) => answer.body)).toEqual([
        { jsonrpc: '2.0', id: 7, result: 'eth_a:x' },
        { jsonrpc: '2.0', id: 7, result: 'eth_b:y' },
        { jsonrpc: '2.0', id: 'z', result: 'eth_c:z' },
      ]);
      expect(server.bodies).toHaveLength(1);
      expect(server.bodies[0].map((one: any) => one.method)).toEqual(['eth_a', 'eth_b', 'eth_c']);
    } finally {
      await server.close();
    }
  });

  it('sends a call alone as it came, and calls made later in a request of their own', async () => {
    const server = await serve(echo);
    try {
      expect((await call(rpcFetch, server.url, 1, 'eth_a')).body.result).toBe('eth_a:undefined');
      expect((await call(rpcFetch, server.url, 2, 'eth_b')).body.id).toBe(2);
      expect(server.bodies).toEqual([
        { jsonrpc: '2.0', id: 1, method: 'eth_a', params: [] },
        { jsonrpc: '2.0', id: 2, method: 'eth_b', params: [] },
      ]);
    } finally {
      await server.close();
    }
  });

  it('starts another request beyond the most calls a batch carries', async () => {
    const server = await serve(echo);
    try {
      const small = batchingRpcFetch(createRpcFetch(), 2);
      const answers = await Promise.all(['a', 'b', 'c'].map((p, i) => call(small, server.url, i, 'eth_x', p)));
      expect(answers.map((answer) => answer.body.result)).toEqual(['eth_x:a', 'eth_x:b', 'eth_x:c']);
      expect(server.bodies.map((body) => (Array.isArray(body) ? body.length : 1))).toEqual([2, 1]);
    } finally {
      await server.close();
    }
  });

  it('gives a caller whose call the node left out an error of its own, never another call’s result', async () => {
    const server = await serve((calls, response) =>
      json(response, [{ jsonrpc: '2.0', id: calls[1].id, result: 'second' }]),
    );
    try {
      const [first, second] = await Promise.all([
        call(rpcFetch, server.url, 1, 'eth_a'),
        call(rpcFetch, server.url, 2, 'eth_b'),
      ]);
      expect(first.body).toMatchObject({ id: 1, error: { code: -32603 } });
      expect(first.body.result).toBeUndefined();
      expect(second.body).toEqual({ jsonrpc: '2.0', id: 2, result: 'second' });
    } finally {
      await server.close();
    }
  });

  it('passes on a refusal of the whole batch: an error status, or one error object, to every caller', async () => {
    const refusing = await serve((_, response) => json(response, { error: 'slow down' }, 429));
    const oneError = await serve((_, response) =>
      json(response, { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'batch too large' } }),
    );
    try {
      const limited = await Promise.all([call(rpcFetch, refusing.url, 1, 'a'), call(rpcFetch, refusing.url, 2, 'b')]);
      expect(limited).toEqual([
        { status: 429, body: { error: 'slow down' } },
        { status: 429, body: { error: 'slow down' } },
      ]);
      const refused = await Promise.all([call(rpcFetch, oneError.url, 1, 'a'), call(rpcFetch, oneError.url, 2, 'b')]);
      expect(refused.map((answer) => answer.body)).toEqual([
        { jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'batch too large' } },
        { jsonrpc: '2.0', id: 2, error: { code: -32005, message: 'batch too large' } },
      ]);
    } finally {
      await Promise.all([refusing.close(), oneError.close()]);
    }
  });

  it('gives no caller a result the node answered as a single object, as if for one call: each gets an error', async () => {
    const server = await serve((_, response) => json(response, { jsonrpc: '2.0', id: 0, result: '0xde0b6b3a7640000' }));
    try {
      const answers = await Promise.all([
        call(rpcFetch, server.url, 1, 'eth_getBalance'),
        call(rpcFetch, server.url, 2, 'eth_getBalance'),
      ]);
      for (const [i, answer] of answers.entries()) {
        expect(answer.body.result).toBeUndefined();
        expect(answer.body).toMatchObject({ id: i + 1, error: { code: -32603 } });
      }
    } finally {
      await server.close();
    }
  });

  it('rejects only the caller whose signal aborted; the others get their answers', async () => {
    const server = await serve((calls, response) => setTimeout(() => echo(calls, response), 50));
    try {
      const gone = new AbortController();
      const calls = [
        call(rpcFetch, server.url, 1, 'eth_a', 'a', gone.signal),
        call(rpcFetch, server.url, 2, 'eth_b', 'b'),
      ];
      setTimeout(() => gone.abort(new Error('caller gave up')), 10);
      const [first, second] = await Promise.allSettled(calls);
      expect(first).toEqual({ status: 'rejected', reason: new Error('caller gave up') });
      expect(second).toMatchObject({ status: 'fulfilled', value: { body: { id: 2, result: 'eth_b:b' } } });
    } finally {
      await server.close();
    }
  });

  it('rejects every caller with the network’s error when nothing listens, which reads as unreachable', async () => {
    const server = await serve(echo);
    const url = server.url;
    await server.close();
    const results = await Promise.allSettled([call(rpcFetch, url, 1, 'a'), call(rpcFetch, url, 2, 'b')]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'ECONNREFUSED' });
    }
    const client = createPublicClient({ transport: http(url, { fetchFn: rpcFetch, retryCount: 0 }) });
    const error = await client.getChainId().catch((caught: unknown) => caught);
    expect(isChainUnreachable(error)).toBe(true);
  });

  it('serves viem: concurrent reads through one batch, each with its own result', async () => {
    const server = await serve((calls, response) =>
      json(
        response,
        (Array.isArray(calls) ? calls : [calls]).map((one: any) => ({
          jsonrpc: '2.0',
          id: one.id,
          result: one.method === 'eth_chainId' ? '0x7a69' : '0x10',
        })),
      ),
    );
    try {
      const client = createPublicClient({ transport: http(server.url, { fetchFn: rpcFetch }) });
      expect(await Promise.all([client.getChainId(), client.getBlockNumber({ cacheTime: 0 })])).toEqual([31337, 16n]);
      expect(server.bodies).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
