import { rememberLast } from '@crawlgate/core';
import type { Hex } from 'viem';
import type { OnChainChannel } from '../chain/escrow';

/** Channels remembered at most; the least recently read are forgotten first. */
const MAX_CHANNELS = 10_000;

/**
 * The chain state of the channels this instance read lately, so that a payer paying page after page
 * on one channel does not cost three RPC reads and a round trip per voucher. A state is handed out
 * only while younger than `maxAgeMs`, counted from when its read started (the state is at least that
 * new). The voucher service still reads the chain whenever a remembered state would refuse a voucher.
 * It remembers only its confirmed-depth reads (readConfirmedChannel): a state handed out is never
 * shallower than a fresh read.
 */
export class RecentChannelStates {
  private readonly states = new Map<string, { state: OnChainChannel; readAt: number }>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The read start time to pass to `remember` for a read starting now. */
  startOfRead(): number {
    return this.now();
  }

  /** The channel's state if one read started less than `maxAgeMs` ago. */
  get(channelId: Hex): OnChainChannel | undefined {
    const key = channelId.toLowerCase();
    const entry = this.states.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.readAt < this.maxAgeMs) return entry.state;
    this.states.delete(key);
    return undefined;
  }

  /** Keeps a state read from `readAt` on, unless a read that started later is already kept. */
  remember(channelId: Hex, state: OnChainChannel, readAt: number): void {
    if (this.maxAgeMs <= 0) return;
    const key = channelId.toLowerCase();
    const kept = this.states.get(key);
    if (kept && kept.readAt > readAt) return;
    rememberLast(this.states, key, { state, readAt }, MAX_CHANNELS);
  }
}
