/*
 * Whether a request that failed surely never reached a server, so that a payment it carried never
 * left this process: nobody holds it, nobody can settle it. Only a failure before any request went
 * out (a signature not made) is such. A connection refused is not: fetch itself sends a request
 * again on a new connection (after a 421 Misdirected Request, as the fetch standard says), and so
 * does a retrying dispatcher, so the connection refused may be the second one, the payment read on
 * the first. Neither shows in the error fetch throws.
 */

const unsent = new WeakSet<object>();

/**
 * Runs `send` with `http` watched, and marks what it throws as unsent (wasUnsent) when no request had
 * gone out. `leaveUnless`: its first request does not leave once this signal has fired (an AbortError
 * thrown, its cause the signal's reason, marked unsent), checked as it would leave: the request is
 * signed in between (Web Bot Auth), and `http` may be a fetch that ignores an aborted signal.
 */
export async function markingUnsent<T>(
  http: typeof fetch,
  send: (http: typeof fetch) => Promise<T>,
  leaveUnless?: AbortSignal,
): Promise<T> {
  let requests = 0;
  const watched: typeof fetch = (input, init) => {
    if (requests === 0 && leaveUnless?.aborted) throw callerGaveUp(leaveUnless.reason);
    requests++;
    return http(input, init);
  };
  try {
    return await send(watched);
  } catch (error) {
    if (requests === 0 && isObject(error)) unsent.add(error);
    throw error;
  }
}

/**
 * An error of its own, never the caller's reason: that one may be no object, or one object shared by
 * many fetches (a crawl's signal), which a send whose request left may throw too.
 */
const callerGaveUp = (reason: unknown) =>
  Object.assign(new DOMException('The caller gave up before the request left', 'AbortError'), { cause: reason });

/** Thrown by markingUnsent for a request that surely never reached a server. */
export const wasUnsent = (error: unknown): boolean => isObject(error) && unsent.has(error);

const isObject = (value: unknown): value is object =>
  (typeof value === 'object' || typeof value === 'function') && value !== null;
