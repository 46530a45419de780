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

/**
 * A JSON-RPC proxy for tests in front of the local chain, answering each call (alone or in a
 * batch) with `rewrite`'s result instead of the node's: a node that lies or lags (a receipt said
 * reverted, another transaction's receipt), which no honest anvil answers.
 */
export async function startRpcRewriter(
  upstream: string,
  rewrite: (exchange: RpcExchange) => unknown,
): Promise<RpcRewriter> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const calls = JSON.parse(body) as Call | Call[];
    const answers = (await answer.json()) as Answer | Answer[];
    const rewritten = (call: Call | undefined, reply: Answer): Answer =>
      call && 'result' in reply
        ? { ...reply, result: rewrite({ method: call.method, params: call.params ?? [], result: reply.result }) }
        : reply;
    const out = Array.isArray(answers)
      ? answers.map((reply) =>
          rewritten(
            (calls as Call[]).find((call) => call.id === reply.id),
            reply,
          ),
        )
      : rewritten(calls as Call, answers);
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
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
  id: unknown;
  result?: unknown;
}
