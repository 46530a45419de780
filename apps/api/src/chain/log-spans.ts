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
 * beyond `widest`), and kept at what the node then answered. A span refused for the number of its
 * events rather than its width is split where it is (splitOnResultsCap), the width kept as it was.
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
      found.push(...(await splitOnResultsCap(start, end, ask)));
    } catch (error) {
      // Refused for its events, it was split already (splitOnResultsCap): not a range the node caps.
      if (blocks === 1n || blocks <= answered || !isRangeRefusal(error) || isResultsCap(error)) throw error;
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
 * Calls one range refused for its number of events may be split into: a burst of a few thousand
 * events under a cap of 10,000 takes a handful; a node refusing every part (failing, not capping)
 * costs this many calls, not one per block.
 */
const MAX_SPLIT_CALLS = 64;

/**
 * What `ask` finds over [fromBlock, toBlock], the range split in halves wherever the node refuses
 * it for holding more events than it answers at once (isResultsCap): a burst of events (anyone
 * can fill a shared contract's log) is read in narrower spans there alone, and the span the search
 * keeps is not narrowed for it. One block over the cap, or more than MAX_SPLIT_CALLS calls, is thrown.
 */
async function splitOnResultsCap<T>(
  fromBlock: bigint,
  toBlock: bigint,
  ask: (fromBlock: bigint, toBlock: bigint) => Promise<T[]>,
  calls = { left: MAX_SPLIT_CALLS },
): Promise<T[]> {
  try {
    return await ask(fromBlock, toBlock);
  } catch (error) {
    if (fromBlock === toBlock || !isResultsCap(error) || calls.left < 2) throw error;
    calls.left -= 2;
    const middle = fromBlock + (toBlock - fromBlock) / 2n;
    const first = await splitOnResultsCap(fromBlock, middle, ask, calls);
    return [...first, ...(await splitOnResultsCap(middle + 1n, toBlock, ask, calls))];
  }
}

/**
 * Whether the node refused eth_getLogs for the number of events it would answer, not the range, as
 * its message says (Infura's and others' "query returned more than 10000 results", Alchemy's "Log
 * response size exceeded"). Not its code alone: -32005 ("limit exceeded") also answers a rate limit.
 */
export function isResultsCap(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  const rpc = error.walk((cause) => cause instanceof RpcRequestError);
  return (
    rpc instanceof RpcRequestError &&
    /more than \d+ results|response size exceeded|too many (?:logs|results)/i.test(rpc.details)
  );
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
