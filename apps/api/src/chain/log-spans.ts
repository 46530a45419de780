/*
 * Chain events over a range of blocks, asked of the node in spans it answers. Hosted nodes cap
 * eth_getLogs's range (at 500, 2,000 or 10,000 blocks, by provider and plan): one call over the
 * recent blocks fails on such a node every time, and the claimer, which reads the escrow's
 * withdrawals once a run, would never finish a run (no voucher is then taken).
 */

/** The widest span the node answered since a refusal (first the recent blocks): shared by a chain's searches. */
export interface LogSpan {
  blocks: bigint;
}

/**
 * What `ask` finds over [fromBlock, toBlock], in block order, asked span by span. A span refused is
 * halved and asked again, down to one block; the width that then answered is kept in `span`, so a
 * capped node costs its refusals once, not on every search. A refusal of one block is the node's
 * failure, thrown. A node failing for a moment may leave `span` narrower: more calls, never fewer blocks.
 */
export async function eventsInSpans<T>(
  span: LogSpan,
  fromBlock: bigint,
  toBlock: bigint,
  ask: (fromBlock: bigint, toBlock: bigint) => Promise<T[]>,
): Promise<T[]> {
  const found: T[] = [];
  let width = span.blocks > 0n ? span.blocks : 1n;
  let refused = false;
  for (let start = fromBlock; start <= toBlock;) {
    const end = start + width - 1n < toBlock ? start + width - 1n : toBlock;
    try {
      found.push(...(await ask(start, end)));
    } catch (error) {
      if (end === start) throw error;
      width = (end - start + 1n) / 2n;
      refused = true;
      continue;
    }
    if (refused && width < span.blocks) span.blocks = width;
    start = end + 1n;
  }
  return found;
}
