/*
 * Whether a request that failed surely never reached a server, so that a payment it carried never
 * left this process: nobody holds it, nobody can settle it. Only a failure before any request went
 * out (a signature not made), or a connection to the first server never made (refused, its name not
 * found, its connect timed out) is such. Anything else may come after a server read the request: a
 * dropped connection, a reset, a timeout while waiting, a redirect's next hop failing after the
 * first server took the payment.
 */

/** Connection failures (a cause's code, for the syscall that gives it) that come before a byte is written. */
const NEVER_CONNECTED: Record<string, string | undefined> = {
  ECONNREFUSED: 'connect',
  EHOSTUNREACH: 'connect',
  ENETUNREACH: 'connect',
  ENOTFOUND: 'getaddrinfo',
  EAI_AGAIN: 'getaddrinfo',
  UND_ERR_CONNECT_TIMEOUT: undefined, // undici's, set on no syscall
};

const unsent = new WeakSet<object>();

/**
 * Runs `send` with `http` watched, and marks what it throws as unsent (wasUnsent) when no request
 * had gone out, or the first one could not connect through a dispatcher that sends once (sentOnce).
 */
export async function markingUnsent<T>(http: typeof fetch, send: (http: typeof fetch) => Promise<T>): Promise<T> {
  let requests = 0;
  let answered = false;
  let firstSentOnce = false;
  const watched: typeof fetch = async (input, init) => {
    if (requests++ === 0) firstSentOnce = sentOnce(init);
    const response = await http(input, init);
    answered = true;
    return response;
  };
  try {
    return await send(watched);
  } catch (error) {
    if (!answered && (requests === 0 || (requests === 1 && firstSentOnce && neverConnected(error))) && isObject(error))
      unsent.add(error);
    throw error;
  }
}

/** Where undici (Node's fetch) keeps the dispatcher requests go through when they name none. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * Whether a request sent with `init` goes out once: it names no dispatcher, and the global one is a
 * plain undici Agent (or there is none: another runtime's fetch). A retrying dispatcher (undici's
 * RetryAgent, a retry interceptor, a proxy agent of unknown ways) may have sent it, lost the
 * answer, then failed to connect on its resend: its connection failure says nothing.
 */
export function sentOnce(init: RequestInit | undefined): boolean {
  if (isObject(init) && (init as { dispatcher?: unknown }).dispatcher !== undefined) return false;
  const global = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];
  return global === undefined || (isObject(global) && global.constructor?.name === 'Agent');
}

/** Thrown by markingUnsent for a request that surely never reached a server. */
export const wasUnsent = (error: unknown): boolean => isObject(error) && unsent.has(error);

/**
 * fetch's error ("fetch failed") whose cause is a connection never made (a happy-eyeballs
 * AggregateError: every attempt's). Read by shape, not instanceof: fetch's errors may come from
 * another realm (a test runner's VM context, a fetch of the caller's).
 */
export function neverConnected(error: unknown): boolean {
  const cause = isObject(error) ? (error as { cause?: unknown }).cause : undefined;
  const attempts = isObject(cause) ? (cause as { errors?: unknown }).errors : undefined;
  if (Array.isArray(attempts) && attempts.length > 0) return attempts.every(isConnectFailure);
  return isConnectFailure(cause);
}

function isConnectFailure(cause: unknown): boolean {
  if (!isObject(cause)) return false;
  const { code, syscall } = cause as { code?: unknown; syscall?: unknown };
  return typeof code === 'string' && Object.hasOwn(NEVER_CONNECTED, code) && NEVER_CONNECTED[code] === syscall;
}

const isObject = (value: unknown): value is object =>
  (typeof value === 'object' || typeof value === 'function') && value !== null;
