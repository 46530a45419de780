import { BaseError, HttpRequestError, RpcRequestError } from 'viem';

/*
 * Chain events over a range of blocks, asked of the node in spans it answers. Hosted nodes cap
 * eth_getLogs's range (at 500, 2,000 or 10,000 blocks, by provider and plan): one call over the
 * recent blocks fails on such a node every time, and the claimer, which reads the escrow's
 * withdrawals once a run, would never finish a run (no voucher is then taken).
 */

/** The widest span the node answered after refusing a wider one (first the recent blocks): shared by a chain's searches. */
export interface LogSpan {
  blocks: bigint;
  /** The span it started from (the recent blocks), which a narrowed one widens back towards; absent: never widened. */
  widest?: bigint;
  /** When `blocks` last changed or a wider span was last tried (performance.now()). */
  changedAt?: number;
}

/**
 * How long a narrowed span is kept before a search tries twice its width: a node's refusal may
 * have been a cap since lifted, or a limit on results that a burst of events hit, and a span kept
 * narrow for good would cost every later search many calls. A node that still refuses costs one
 * refused call a wait.
 */
export const WIDEN_AFTER_MS = 10 * 60_000;

/**
 * What `ask` finds over [fromBlock, toBlock], in block order, asked span by span. A span the node
 * refuses (its JSON-RPC error, or HTTP 400 or 413) is halved and asked again, down to one block;
 * the width that then answered is kept in `span`, so a capped node costs its refusals once, not
 * on every search. Anything else (a timeout, a rate limit, a server error) is thrown at once, and
 * so is a refusal of a span no wider than one the node answered in this search: neither is a cap,
 * and neither narrows `span`. A span narrowed WIDEN_AFTER_MS ago is tried at twice its width (never
 * beyond `widest`), and kept at what the node then answered.
 */
export async function eventsInSpans<T>(
  span: LogSpan,
  fromBlock: bigint,
  toBlock: bigint,
  ask: (fromBlock: bigint, toBlock: bigint) => Promise<T[]>,
  now = performance.now(),
): Promise<T[]> {
  const found: T[] = [];
  const kept = span.blocks > 0n ? span.blocks : 1n;
  const widening =
    span.widest !== undefined &&
    kept < span.widest &&
    (span.changedAt === undefined || now - span.changedAt >= WIDEN_AFTER_MS);
  let width = widening ? (kept * 2n < span.widest! ? kept * 2n : span.widest!) : kept;
  let answered = 0n;
  let triedWider = false;
  for (let start = fromBlock; start <= toBlock;) {
    const end = start + width - 1n < toBlock ? start + width - 1n : toBlock;
    const blocks = end - start + 1n;
    if (blocks > kept) triedWider = true;
    try {
      found.push(...(await ask(start, end)));
    } catch (error) {
      if (blocks === 1n || blocks <= answered || !isRangeRefusal(error)) throw error;
      width = blocks / 2n;
      continue;
    }
    if (blocks > answered) answered = blocks;
    start = end + 1n;
  }
  if (width < kept) {
    span.blocks = width;
    span.changedAt = now;
  } else if (triedWider) {
    if (answered > kept) span.blocks = answered;
    span.changedAt = now;
  }
  return found;
}

/**
 * Whether the node refused the request itself (a JSON-RPC error answered, or HTTP 400 or 413) rather
 * than failed to answer it (a timeout, a network error, HTTP 429 or 5xx, JSON-RPC's rate limit 429).
 */
export function isRangeRefusal(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const http = error.walk((cause) => cause instanceof HttpRequestError);
  if (http instanceof HttpRequestError) return http.status === 400 || http.status === 413;
  const rpc = error.walk((cause) => cause instanceof RpcRequestError);
  return rpc instanceof RpcRequestError && rpc.code !== 429;
}
