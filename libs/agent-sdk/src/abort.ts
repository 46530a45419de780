/*
 * The caller's AbortSignal where the agent waits on work that goes on without it: a payment's
 * fate being learned, another fetch's payment.
 */

/** `promise`, or the signal's reason if it aborts first (the promise itself goes on). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}

/**
 * A signal for work that goes on when its caller gives up (a payment's request: its answer is the
 * payment's outcome), bounded all the same: it aborts `graceMs` after `caller` does, a TimeoutError.
 * `release()` once the work no longer needs the caller watched (the listener goes; a grace already
 * running still ends it). No caller, no signal: the work is bounded as the caller's would have been.
 */
export function graceAfter(
  caller: AbortSignal | undefined,
  graceMs: number,
): { signal: AbortSignal | undefined; release: () => void } {
  if (!caller) return { signal: undefined, release: () => undefined };
  const own = new AbortController();
  const start = () => {
    const ended = () =>
      own.abort(new DOMException(`no answer within ${graceMs} ms of the caller giving up`, 'TimeoutError'));
    setTimeout(ended, graceMs).unref?.();
  };
  if (caller.aborted) start();
  else caller.addEventListener('abort', start, { once: true });
  return { signal: own.signal, release: () => caller.removeEventListener('abort', start) };
}
