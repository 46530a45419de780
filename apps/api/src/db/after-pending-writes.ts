/**
 * Resolves once the event loop has run what is pending (setImmediate). The database driver writes a
 * query on a later tick than the call that starts it: CPU work awaited after this runs while the
 * database answers, where awaited at once it would hold the query back until it is done.
 */
export const afterPendingWrites = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
