import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One JSON-RPC call's method and params, and what the node answered it. */
export interface RpcExchange {
  method: string;
  params: unknown[];
  result: unknown;
}

export interface RpcRewriter {
  /** http://127.0.0.1:<port>: pass as startTestApp's chainRpcUrl. */
  url: string;
  close(): Promise<void>;
}

/** A JSON-RPC error a node answers instead of a result, or an HTTP status it answers the whole request with. */
export type RpcRefusal = { code: number; message: string } | { httpStatus: number };

/**
 * A JSON-RPC proxy for tests in front of the local chain, answering each call (alone or in a
 * batch) with `rewrite`'s result instead of the node's: a node that lies or lags (a receipt said
 * reverted, another transaction's receipt), which no honest anvil answers. A call `refuse` answers
 * for never reaches the chain and gets that error (or its request that HTTP status): a node that
 * caps what it serves (eth_getLogs's range), or limits its callers' rate. A request holding a call
 * `delayMs` names is passed on that many milliseconds late: a slow node, or a chain's block time.
 */
export async function startRpcRewriter(
  upstream: string,
  rewrite: (exchange: RpcExchange) => unknown,
  refuse: (call: { method: string; params: unknown[] }) => RpcRefusal | undefined = () => undefined,
  delayMs: (call: { method: string; params: unknown[] }) => number = () => 0,
): Promise<RpcRewriter> {
  const server = createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      const refusals = new Map(calls.map((call) => [call, refuse({ method: call.method, params: call.params ?? [] })]));
      const status = [...refusals.values()].find((refusal) => refusal && 'httpStatus' in refusal);
      if (status && 'httpStatus' in status) {
        response.writeHead(status.httpStatus, { 'content-type': 'text/plain' }).end('refused');
        return;
      }
      const passed = calls.filter((call) => !refusals.get(call));
      const delay = Math.max(0, ...passed.map((call) => delayMs({ method: call.method, params: call.params ?? [] })));
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      let answers: Answer[] = [];
      if (passed.length > 0) {
        const answer = await fetch(upstream, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(Array.isArray(parsed) ? passed : passed[0]),
        });
        const body = (await answer.json()) as Answer | Answer[];
        answers = Array.isArray(body) ? body : [body];
      }
      const out = calls.map((call): Answer => {
        const refusal = refusals.get(call);
        if (refusal && 'code' in refusal) return { jsonrpc: '2.0', id: call.id, error: refusal };
        const reply = answers.find((one) => one.id === call.id);
        if (!reply) return { jsonrpc: '2.0', id: call.id, error: { code: -32603, message: 'no answer upstream' } };
        return 'result' in reply
          ? { ...reply, result: rewrite({ method: call.method, params: call.params ?? [], result: reply.result }) }
          : reply;
      });
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
    } catch (error) {
      response.writeHead(502, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Call {
  id: unknown;
  method: string;
  params?: unknown[];
}

interface Answer {
  jsonrpc?: string;
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * A `refuse` for startRpcRewriter: eth_getLogs over more than `maxBlocks` blocks is refused as a
 * hosted node refuses it (a JSON-RPC error naming its cap); `refused` counts the refusals.
 */
export function capsLogRange(maxBlocks: bigint, refused = { count: 0 }) {
  return ({ method, params }: { method: string; params: unknown[] }): RpcRefusal | undefined => {
    const range = params[0] as { fromBlock?: string; toBlock?: string } | undefined;
    if (method !== 'eth_getLogs' || !range?.fromBlock?.startsWith('0x') || !range.toBlock?.startsWith('0x'))
      return undefined;
    if (BigInt(range.toBlock) - BigInt(range.fromBlock) + 1n <= maxBlocks) return undefined;
    refused.count++;
    return { code: -32602, message: `eth_getLogs is limited to a ${maxBlocks} block range` };
  };
}
