import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * The `fetch` viem's JSON-RPC transport calls, on node:http with kept-alive sockets. Node's global
 * fetch (undici) wrote each request body as a stream, one writev per chunk: under a load of
 * settlements that took a sixth of the API's CPU. A JSON-RPC call is one small request and one
 * buffered answer, so a request is written in one go and the answer handed over whole.
 *
 * Failures keep node's own errors (`code` ECONNREFUSED, ECONNRESET, …), which the payment code
 * reads to tell "never sent" from "may have landed"; an aborted signal rejects with its reason.
 */
export function createRpcFetch({ maxSockets = 64 }: { maxSockets?: number } = {}): typeof fetch {
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets }),
    https: new HttpsAgent({ keepAlive: true, maxSockets }),
  };
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const secure = url.protocol === 'https:';
      if (!secure && url.protocol !== 'http:') throw new TypeError(`RPC over ${url.protocol} is not supported`);
      const body = bodyBytes(init.body);
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      if (body) headers['content-length'] = String(body.byteLength);
      const options = {
        method: init.method ?? 'GET',
        headers,
        agent: secure ? agents.https : agents.http,
        signal: init.signal ?? undefined,
      };
      const request = (secure ? httpsRequest : httpRequest)(url, options, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('error', reject);
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          // A Response may not carry a body with these statuses.
          const empty = status === 204 || status === 205 || status === 304;
          resolve(
            new Response(empty ? null : Buffer.concat(chunks), {
              status,
              statusText: answer.statusMessage,
              headers: responseHeaders(answer.headers),
            }),
          );
        });
      });
      request.on('error', (error) => reject(init.signal?.aborted ? init.signal.reason : error));
      request.end(body);
    });
}

function bodyBytes(body: RequestInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('RPC request bodies are strings or bytes');
}

function responseHeaders(headers: IncomingHttpHeaders): [string, string][] {
  const list: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) list.push([name, one]);
  }
  return list;
}
