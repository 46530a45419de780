/** What withinDeadline rejects with when the work did not settle in time. */
export class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/**
 * `work`'s outcome, or a DeadlineError after `ms`. For work that should stop by itself (a fetch
 * given an abort signal) but may not: a fetch of the caller's own, a polyfill, a driver that ignores
 * its signal would otherwise hold the caller forever. The work itself is not stopped.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
