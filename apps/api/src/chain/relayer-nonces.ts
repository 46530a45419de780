/** Tries when the node refuses a nonce as taken (another sender got it between our read and our broadcast). */
const MAX_ATTEMPTS = 3;
/**
 * What nodes answer when another transaction holds the nonce: mined, or pending at the same fees.
 * Not "already known" / "already imported": that is this very transaction, which may have landed.
 */
const NONCE_TAKEN = /nonce too low|replacement transaction underpriced/i;

export interface RelayerNonces {
  /** Runs `broadcast` with the relayer's next nonce once its turn comes (RelayerTurn), every earlier one finished. */
  send<T>(broadcast: (nonce: number) => Promise<T>, turn: RelayerTurn): Promise<T>;
  /**
   * Runs `work` in a turn as `send` does, taking no nonce: a replacement of a pending transaction
   * (fee-bump.ts), judged and sent while no other broadcast, here or on another instance, reads the
   * pending count (a nonce freed meanwhile would otherwise be taken by one and replaced by the other).
   */
  alone<T>(work: () => Promise<T>, turn: RelayerTurn): Promise<T>;
}

/**
 * Whose turn a broadcast waits for. The claimer's go first: its claims keep every site's vouchers
 * taken, and a withdrawing payer from taking back what it was charged. The others take turns by
 * payee, a broadcast each: one payee's many (paid to it by payers of its own, at a price the gas
 * exceeds, which costs it nothing) hold another's back a turn each, never behind them all.
 */
export type RelayerTurn = 'claimer' | { payee: string };

/**
 * Runs `work` while no other API instance on the relayer's key runs its own broadcast, or throws
 * RelayerTurnNotHad without running it. Each instance reads the pending count itself: one that read
 * it while another was between its read and its send took the same nonce, and a node takes a
 * transaction at a pending nonce as a replacement when its fees are a tenth higher (a newer
 * estimate, an urgent claim), so the other's was never mined.
 */
export type AcrossInstances = <T>(work: () => Promise<T>) => Promise<T>;

/** One process alone on its key (or the tests of one function). */
const aloneOnTheKey: AcrossInstances = (work) => work();

/** The turn across instances was not had (held too long by another, or the database failed): nothing was broadcast. */
export class RelayerTurnNotHad extends Error {
  constructor(why: string, cause?: unknown) {
    super(why, { cause });
    this.name = 'RelayerTurnNotHad';
  }
}

/**
 * Assigns the relayer's nonces, one broadcast at a time. The nonce is the chain's pending count,
 * read just before each broadcast rather than counted here, so only transactions the node took use
 * one: a broadcast that failed, a transaction the chain lost, a restarted chain or another process
 * on the same key never leaves a gap, behind which nodes would hold every later transaction.
 * Only this step is serialized, within this process and, through `acrossInstances`, with the other
 * API instances on the key: settlements check, estimate and wait for receipts side by side.
 */
export function createRelayerNonces(
  pendingNonce: () => Promise<number>,
  acrossInstances: AcrossInstances = aloneOnTheKey,
): RelayerNonces {
  const claimer: (() => Promise<void>)[] = [];
  /** Each payee's waiting broadcasts, the payee whose turn is next first. */
  const payees = new Map<string, (() => Promise<void>)[]>();
  let running = false;
  const next = () => {
    if (claimer.length > 0) return claimer.shift();
    const first = payees.entries().next();
    if (first.done) return undefined;
    const [payee, waiting] = first.value;
    payees.delete(payee);
    const turn = waiting.shift();
    if (waiting.length > 0) payees.set(payee, waiting); // to the back of the line
    return turn;
  };
  const run = async () => {
    if (running) return;
    running = true;
    try {
      for (let turn = next(); turn; turn = next()) await turn();
    } finally {
      running = false;
    }
  };
  const inTurn = <T>(work: () => Promise<T>, turn: RelayerTurn): Promise<T> =>
    new Promise((resolve, reject) => {
      const go = () => acrossInstances(work).then(resolve, reject);
      if (turn === 'claimer') claimer.push(go);
      else {
        const payee = turn.payee.toLowerCase();
        const waiting = payees.get(payee);
        if (waiting) waiting.push(go);
        else payees.set(payee, [go]);
      }
      void run();
    });
  return {
    send: (broadcast, turn) => inTurn(() => broadcastWithNextNonce(pendingNonce, broadcast), turn),
    alone: inTurn,
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
