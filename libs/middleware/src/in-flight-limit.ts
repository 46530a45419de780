/*
 * A bound on calls running at once. A crawler can make the gate call the API with every payment
 * header it invents (each names a gate minted for it): while the API is slow, such calls would
 * pile up, a socket and some memory each, until the site's process ran out of file descriptors
 * and refused people too. Past the bound a call is not started, and the caller answers at once.
 */

export interface InFlightLimit {
  /** `call()` started and counted until it settles; undefined, not started, when `max` are running. */
  run<T>(call: () => Promise<T>): Promise<T> | undefined;
}

export function inFlightLimit(max: number): InFlightLimit {
  let running = 0;
  return {
    run(call) {
      if (running >= max) return undefined;
      running++;
      let started;
      try {
        started = call();
      } catch (error) {
        running--;
        throw error;
      }
      return started.finally(() => running--);
    },
  };
}
