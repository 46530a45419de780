/**
 * `flush`, run once the event loop has worked through what has arrived (setImmediate), however
 * often it is asked for before then: what hot paths batch (site lookups, chain reads) is gathered
 * until then. A caller that flushes early may leave it to run once more; `flush` must then find
 * nothing to do.
 */
export function whenIdle(flush: () => void): () => void {
  let scheduled = false;
  const run = () => {
    scheduled = false;
    flush();
  };
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(run);
  };
}
