import { whenIdle } from '../app/when-idle';

/** The most JSON-RPC calls one HTTP request carries; more start another. */
export const MAX_RPC_BATCH = 100;

interface Waiting {
  url: string;
  headers: RequestInit['headers'];
  call: { id?: unknown } & Record<string, unknown>;
  signal: AbortSignal | null | undefined;
  resolve(response: Response): void;
  reject(error: unknown): void;
  settled: boolean;
}

/**
 * A `fetch` for viem's JSON-RPC transport that sends the calls made while the event loop works
 * through what has arrived as one JSON-RPC batch (one HTTP request), once it has (setImmediate).
 * viem's own batching waits on a timer, and Node's shortest timer is a millisecond: every read of
 * a payment (its simulation, the payer's balance, the receipt) waited that long before it left.
 *
 * Each caller still gets an answer of its own, as from a request of its own: its own call's result
 * or error under its own id; the batch's HTTP status when that is not a success (viem reports it);
 * a JSON-RPC error when the node's answer left its call out; the network's error when the request
 * failed. A call alone goes as it came. For reads only: a broadcast's fate is judged by its own request.
 */
export function batchingRpcFetch(send: typeof fetch, maxBatch = MAX_RPC_BATCH): typeof fetch {
  let waiting: Waiting[] = [];

  const flush = () => {
    const batch = waiting.filter((one) => !one.settled);
    waiting = [];
    if (batch.length === 1) void sendAlone(send, batch[0]);
    else if (batch.length > 1) void sendBatch(send, batch);
  };
  const flushWhenIdle = whenIdle(flush);

  return (input, init = {}) => {
    const call = singleCall(init);
    if (!call || init.method !== 'POST') return send(input, init);
    return new Promise<Response>((resolve, reject) => {
      const one: Waiting = {
        url: input instanceof Request ? input.url : String(input),
        headers: init.headers,
        call,
        signal: init.signal,
        resolve: (response) => settle(() => resolve(response)),
        reject: (error) => settle(() => reject(error)),
        settled: false,
      };
      function settle(end: () => void) {
        if (one.settled) return;
        one.settled = true;
        end();
      }
      if (one.signal?.aborted) return one.reject(one.signal.reason);
      one.signal?.addEventListener('abort', () => one.reject(one.signal!.reason), { once: true });
      waiting.push(one);
      if (waiting.length >= maxBatch) flush();
      else flushWhenIdle();
    });
  };
}

/** The one JSON-RPC call a request body carries; undefined for anything else (sent as it came). */
function singleCall(init: RequestInit): Waiting['call'] | undefined {
  if (typeof init.body !== 'string') return undefined;
  try {
    const parsed = JSON.parse(init.body) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Waiting['call'])
      : undefined;
  } catch {
    return undefined;
  }
}

async function sendAlone(send: typeof fetch, one: Waiting): Promise<void> {
  try {
    one.resolve(
      await send(one.url, { method: 'POST', headers: one.headers, body: JSON.stringify(one.call), signal: one.signal }),
    );
  } catch (error) {
    one.reject(one.signal?.aborted ? one.signal.reason : error);
  }
}

async function sendBatch(send: typeof fetch, batch: Waiting[]): Promise<void> {
  // Ids of our own within the batch: callers' ids need not be unique between them.
  const body = JSON.stringify(batch.map((one, i) => ({ ...one.call, id: i })));
  // The request lives while any of its callers still waits for it.
  const abandoned = new AbortController();
  let left = batch.length;
  for (const one of batch)
    one.signal?.addEventListener('abort', () => --left === 0 && abandoned.abort(one.signal!.reason), { once: true });
  let response: Response;
  let text: string;
  try {
    response = await send(batch[0].url, {
      method: 'POST',
      headers: batch[0].headers,
      body,
      signal: abandoned.signal,
    });
    text = await response.text();
  } catch (error) {
    for (const one of batch) one.reject(one.signal?.aborted ? one.signal.reason : error);
    return;
  }
  const answers = response.ok ? answersById(text) : undefined;
  const headers = new Headers(response.headers);
  headers.delete('content-length'); // the batch's, not any one answer's
  batch.forEach((one, i) => {
    const own = answers ? JSON.stringify(answerFor(answers, i, one.call.id)) : text; // not a success, or not JSON-RPC: each caller sees what the node said
    one.resolve(new Response(own, { status: response.status, statusText: response.statusText, headers }));
  });
}

/**
 * The answers of a batch by id. A single error object (a node refusing the whole batch) stands for
 * every call; any other single object (a result, an answer to one call) stands for none of them.
 */
function answersById(text: string): Map<unknown, Record<string, unknown>> | Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (Array.isArray(parsed))
    return new Map(
      parsed
        .filter((answer): answer is Record<string, unknown> => typeof answer === 'object' && answer !== null)
        .map((answer) => [answer.id, answer]),
    );
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const single = parsed as Record<string, unknown>;
  return 'error' in single && !('result' in single) ? single : new Map();
}

function answerFor(
  answers: Map<unknown, Record<string, unknown>> | Record<string, unknown>,
  index: number,
  id: unknown,
): Record<string, unknown> {
  const answer = answers instanceof Map ? answers.get(index) : answers;
  return answer
    ? { ...answer, id }
    : { jsonrpc: '2.0', id, error: { code: -32603, message: 'The node answered the batch without this call' } };
}
