/** Tries when the node refuses a nonce as taken (another sender got it between our read and our broadcast). */
const MAX_ATTEMPTS = 3;
/**
 * What nodes answer when another transaction holds the nonce: mined, or pending at the same fees.
 * Not "already known" / "already imported": that is this very transaction, which may have landed.
 */
const NONCE_TAKEN = /nonce too low|replacement transaction underpriced/i;

export interface RelayerNonces {
  /** Runs `broadcast` with the relayer's next nonce once every earlier broadcast has finished. */
  send<T>(broadcast: (nonce: number) => Promise<T>): Promise<T>;
}

/**
 * Assigns the relayer's nonces, one broadcast at a time. The nonce is the chain's pending count,
 * read just before each broadcast rather than counted here, so only transactions the node took use
 * one: a broadcast that failed, a transaction the chain lost, a restarted chain or another process
 * on the same key never leaves a gap, behind which nodes would hold every later transaction.
 * Only this step is serialized: settlements check, estimate and wait for receipts side by side.
 */
export function createRelayerNonces(pendingNonce: () => Promise<number>): RelayerNonces {
  let previous: Promise<unknown> = Promise.resolve();
  return {
    send(broadcast) {
      const turn = previous.then(() => broadcastWithNextNonce(pendingNonce, broadcast));
      previous = turn.catch(() => undefined);
      return turn;
    },
  };
}

async function broadcastWithNextNonce<T>(
  pendingNonce: () => Promise<number>,
  broadcast: (nonce: number) => Promise<T>,
): Promise<T> {
  let skipBelow = 0;
  for (let attempt = 1; ; attempt++) {
    const nonce = Math.max(await pendingNonce(), skipBelow);
    try {
      return await broadcast(nonce);
    } catch (error) {
      if (attempt === MAX_ATTEMPTS || !isNonceTaken(error)) throw error;
      // Read the chain again, but never offer the refused nonce twice (the node's count may lag).
      skipBelow = nonce + 1;
    }
  }
}

/** viem's messages carry the node's own words ("Details: nonce too low"). */
function isNonceTaken(error: unknown): boolean {
  return error instanceof Error && NONCE_TAKEN.test(error.message);
}
