import { Inject, Injectable, Logger } from '@nestjs/common';
import { BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import type { Address, Hex } from 'viem';
import {
  confirmedBlockNow,
  firstRecentBlock,
  type BatchSettlementChain,
  type ChainContext,
} from '../chain/chain-context';
import { readRelayerGas } from '../chain/chain-health';
import {
  channelIdOf,
  claimCalldata,
  claimsIn,
  readChannel,
  readChannelAtBothDepths,
  settleCalldata,
  unsettled,
  type ClaimRow,
  type OnChainChannel,
} from '../chain/escrow';
import { feeCap, logRepricing, pendingTooLong, repriceIfStuck, type FeeUrgency } from '../chain/fee-bump';
import { eventsInSpans } from '../chain/log-spans';
import { isRevert } from '../chain/revert';
import { tokenRefusesOnly } from '../chain/token-refusal';
import { sentTransactionFate } from '../chain/transaction-state';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import { JOB_LOCKS, whileHoldingLock } from '../db/advisory-lock';
import type { Database } from '../db/database';
import { CONFIG, DATABASE } from '../db/tokens';
import type { PaymentChannel } from '../generated/prisma/client';
import {
  assertFeesWithinCap,
  broadcastFromRelayer,
  prepareRelayerCall,
  relayerCallAtFees,
  waitForReceipt,
} from '../payments/settlement';
import { claimableTotal, claimIsUrgent, spendableOf, withdrawableAt, withdrawalTakesCharged } from './channel-state';
import {
  ChannelStore,
  type ClaimSigner,
  type ReceiverClaims,
  type SentTransaction,
  type UnclaimedChannel,
  type UnclaimedOfReceiver,
} from './channel.store';
import { ClaimerHeartbeatStore, type ClaimerHeartbeat } from './claimer-heartbeat.store';
import { unjudgedWithdrawals } from './harmless-withdrawals';
import { StuckAheadService } from './stuck-ahead.service';

/**
 * Settlements' gas (SETTLEMENT_GAS each) the relayer must hold for vouchers to be taken: a claim and
 * a settle for each of 50 receivers. With gas for one, vouchers of every receiver were taken, and
 * one receiver's claim spent it.
 */
const VOUCHER_GAS_RESERVE = 100n;

/** How long a reading of the relayer's gas judges vouchers (relayerCanClaimNow). */
export const RELAYER_GAS_READ_MS = 5_000;

/** How long a heartbeat found recent judges vouchers (someoneKeepsUp) before it is read again. */
const HEARTBEAT_READ_MS = 5_000;
/** Channels one search of the escrow's withdrawals names (topics ORed): under nodes' limits on a filter's topics (geth's 1,000). */
const WITHDRAWAL_QUERY_CHANNELS = 500;

/**
 * A settle to a receiver the chain reverted, or would (its gas estimate reverted), while the token
 * refuses a transfer from the escrow to that receiver alone (real USDC refuses a blacklisted
 * address, and anyone can name one as an unproven payout address). What its claims collected is in
 * the escrow, credited to it and out of any payer's withdrawal, so it stops no run. A settle every
 * receiver's would meet (the token paused, the escrow blacklisted or short of funds, our calldata
 * wrong) is no receiver's: it fails the run, as a claim's revert does (a claim never calls the token).
 */
class SettleReverted extends Error {}

/**
 * A claim the escrow reverted, or would (its gas estimate reverted). It fails the run, as our
 * calldata or the node is to blame, except a claim of one channel whose payer may finalize now a
 * withdrawal taking charged money (sendClaimAlone): that payer may have finalized first.
 */
class ClaimReverted extends Error {}

export interface ClaimRun {
  /** claimWithSignature transactions sent, and settle transactions sent. */
  claims: Hex[];
  settles: Hex[];
  /** Another instance was claiming (it held the lock), so this one did nothing. */
  skipped: boolean;
}

/**
 * Collects accepted vouchers: per receiver and token, once the unclaimed total reaches a size, the
 * oldest unclaimed voucher an age (at most a quarter of the withdraw delay), or a payer starts a
 * withdrawal that would take what was charged (the withdraw delay is then the deadline): claims of
 * up to CLAIM_MAX_CHANNELS channels each (claimWithSignature), signed by the receiver authorizer and
 * sent by the relayer, then settle to the receiver. The chain is the truth: before
 * claiming, every channel's totalClaimed is read back (a claim sent before a crash, or by another
 * instance, counts), and the escrow records a cumulative total at most once, so nothing is claimed twice.
 * Only channels of its escrow naming its key are claimed: one claim batch cannot carry others.
 * Fees: a channel's claim is urgent only when worth it and needed now (claimIsUrgent: its pending
 * withdrawal would take at least CLAIM_MIN_MICROS of what was charged and nobody claimed, and may be
 * finalized within half of its withdraw delay). Urgent channels are claimed in claims of their own,
 * sent (and re-priced) up to RELAYER_URGENT_MAX_FEE_PER_GAS_WEI; so is a claim or settle of their
 * receiver's stuck ahead of them (nothing is sent behind it), a stuck claim carrying an urgent
 * channel, and any relayer transaction pending at a lower nonce than an urgent claim, whatever its
 * kind (StuckAheadService). Every other claim and settle, those of withdrawing channels not urgent
 * included (due at once all the same), keeps RELAYER_MAX_FEE_PER_GAS_WEI.
 * A claim is priced (estimateFeesPerGas) before its gas estimate shows the node its calldata: one
 * refused for fees then shows the node nothing and publishes nothing, and its vouchers may still ask
 * a cooperative refund. Past that price check its vouchers are marked public (the estimate shows
 * them), and the claim is sent at the fees checked (relayerCallAtFees), not priced again by the node.
 * A run's length: vouchers are taken only while a run finished lately (someoneKeepsUp), so a run
 * visits the receivers with a payer withdrawing, and those with a voucher half its withdraw delay
 * old, all of them, then the others in order for half its interval at most (pastBudget), and reads
 * a receiver's queue from the node only when the database shows it due (receiversToVisit): many
 * receivers due at once, or thousands of small channels, make more runs, not a run long enough to
 * turn vouchers away.
 */
@Injectable()
export class ClaimerService {
  private readonly logger = new Logger('Claimer');
  /** When a run last went through every receiver without a failure, the relayer holding gas for a claim; null before one. */
  private lastCompletedRunAt: number | null = null;
  /** The head up to which this instance last read the escrow's withdrawals (withdrawingChannelIds). */
  private withdrawalsReadUpTo: bigint | undefined;

  /** The relayer's gas, last read for relayerCanClaimNow. */
  private gasReading?: { at: number; canClaim: Promise<boolean> };

  /** When a heartbeat was last found recent (someoneKeepsUp); one found stale is read again each time. */
  private recentHeartbeatAt?: number;

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE) private readonly db: Database,
    private readonly store: ChannelStore,
    private readonly heartbeat: ClaimerHeartbeatStore,
    private readonly stuckAhead: StuckAheadService,
  ) {}

  /**
   * `force`: claim whatever is unclaimed, due or not. With several API instances, one claims at a
   * time: the others' claims of the same channels would be no-ops on chain that still cost gas.
   */
  async runOnce(options: { force?: boolean; now?: Date } = {}): Promise<ClaimRun> {
    const run = await whileHoldingLock(this.db, JOB_LOCKS.claimer, () => this.claimDue(options));
    return run ?? { claims: [], settles: [], skipped: true };
  }

  private async claimDue(options: { force?: boolean; now?: Date }): Promise<ClaimRun> {
    const started = performance.now();
    const run: ClaimRun = { claims: [], settles: [], skipped: false };
    const batch = this.chain.batchSettlement;
    if (!batch) return run;
    let failed = false;
    const signer = this.signer(batch);
    await this.warnOfStranded(signer);
    const unclaimed = await this.store.unclaimedChannels(signer);
    const withdrawals: Withdrawals =
      unclaimed.length === 0
        ? { ids: [], read: true }
        : await this.withdrawingChannelIds(batch, unclaimed).then(
            (ids) => ({ ids, read: true }),
            (error: Error) => {
              failed = true;
              this.logger.warn(
                `reading the escrow's withdrawals failed; every receiver's queue is read, with no time limit: ${error.message}`,
              );
              return { ids: [], read: false };
            },
          );
    const now = options.now ?? new Date();
    const visits = receiversToVisit(
      await this.store.unclaimedByReceiver(signer),
      await this.store.receiversWithUnsettledClaims(this.chain.chainId),
      // Without the escrow's log, a receiver's queue is the only place a withdrawal shows.
      { now, settings: this.config.chain.batchSettlement, readEveryQueue: options.force === true || !withdrawals.read },
    );
    // Without the log this run cannot count (failed), and a limit would only hide withdrawals.
    const budgeted = withdrawals.read && !options.force;
    let routineVisits = 0;
    for (const [i, visit] of visits.entries()) {
      // Never left (they come first): a payer withdrawing, or a voucher half its withdraw delay old.
      const pressing = visit.withdrawing || visit.late;
      if (budgeted && !pressing && routineVisits > 0 && this.pastBudget(started)) {
        this.logger.log(`${visits.length - i} receiver(s) wait for the next run, first in it`);
        break;
      }
      if (!pressing) routineVisits++;
      const { receiver, token } = visit;
      await this.claimReceiver(batch, signer, visit, withdrawals, options, run).catch((error: Error) => {
        if (error instanceof SettleReverted) {
          this.logger.error(
            `settling to ${receiver} reverted; what its claims collected stays in the escrow, credited to it, and the next run tries again: ${error.message}`,
          );
          return;
        }
        failed = true;
        this.logger.warn(`claiming for ${receiver} (${token}) failed; the next run tries again: ${error.message}`);
      });
    }
    // A run that fails here may leave the heartbeat stale: the next voucher reads it again, not a reading of up to 5 s.
    this.recentHeartbeatAt = undefined;
    // A run with nothing due sends nothing: it counts only if the relayer could also pay for a claim.
    if (!failed && (await this.relayerCanClaim())) {
      this.lastCompletedRunAt = performance.now();
      await this.heartbeat.record(this.config.chain.batchSettlement.claimIntervalMs);
    }
    return run;
  }

  /**
   * Whether a scheduled run that started at `started` has used its time for receivers with nothing
   * withdrawing: half its interval. Vouchers are taken only while a run finished within three
   * intervals (someoneKeepsUp), so a run is kept short whatever is due: a receiver it leaves waits
   * for the next run, in which it comes first among its kind (receiversToVisit); one with a payer
   * withdrawing, or a voucher half its withdraw delay old, is never left. An instance that runs one
   * only when asked has no budget.
   */
  private pastBudget(started: number): boolean {
    const { claimIntervalMs } = this.config.chain.batchSettlement;
    return claimIntervalMs > 0 && performance.now() - started >= claimIntervalMs / 2;
  }

  private signer(batch: BatchSettlementChain): ClaimSigner {
    return { chainId: this.chain.chainId, escrow: batch.escrow, receiverAuthorizer: batch.authorizer.address };
  }

  /** Channels left by an escrow or claim authorizer key changed since their vouchers: only the old ones can claim them. */
  private async warnOfStranded(signer: ClaimSigner): Promise<void> {
    const stranded = await this.store.strandedUnclaimed(signer);
    if (stranded > 0)
      this.logger.warn(
        `${stranded} channel(s) with unclaimed vouchers are stranded: they are another escrow's or name another receiver authorizer than ${signer.receiverAuthorizer} (BATCH_SETTLEMENT_ADDRESS or CLAIM_AUTHORIZER_PRIVATE_KEY changed); claim them with that escrow and key`,
      );
  }

  /**
   * Whether the relayer could pay for a claim now, read at most every RELAYER_GAS_READ_MS: a
   * voucher is money only once claimed, so none is taken while nothing could claim it (a payer
   * withdrawing after the delay would take back what it was charged).
   */
  relayerCanClaimNow(): Promise<boolean> {
    const now = performance.now();
    if (!this.gasReading || now - this.gasReading.at > RELAYER_GAS_READ_MS)
      this.gasReading = { at: now, canClaim: this.relayerCanClaim(VOUCHER_GAS_RESERVE) };
    return this.gasReading.canClaim;
  }

  /**
   * Whether some instance's claimer (this one's, or another's on the same database) finished a
   * whole run recently enough to collect what a withdrawal started now would take: within three of
   * its intervals, and never more than a quarter of the withdraw delay ago (one run only when asked
   * counts that long). A voucher is money only once claimed, so none is taken otherwise: with
   * CLAIM_INTERVAL_MS at 0 here and the instance that claims down, or a claimer failing every run,
   * a payer would withdraw after the delay what it was charged for pages already served.
   */
  async someoneKeepsUp(): Promise<boolean> {
    const now = performance.now();
    if (this.recentHeartbeatAt !== undefined && now - this.recentHeartbeatAt <= HEARTBEAT_READ_MS) return true;
    const recent = isRecent(await this.heartbeat.last(), this.config.chain.batchSettlement);
    this.recentHeartbeatAt = recent ? now : undefined;
    return recent;
  }

  /**
   * Whether the relayer holds gas for `settlements` settlements (each counted at SETTLEMENT_GAS): a
   * run needs one; vouchers need VOUCHER_GAS_RESERVE, as a claim and a settle per receiver, and the
   * exact settlements beside them, spend it.
   */
  private async relayerCanClaim(settlements = 1n): Promise<boolean> {
    try {
      return (await readRelayerGas(this.chain)).settlementsLeft >= settlements;
    } catch {
      return false;
    }
  }

  /**
   * Whether this instance's claimer collects in time what a withdrawal started now would take: it
   * runs (every quarter withdraw delay at most, so three intervals fit well inside one delay) and
   * has finished a run, with gas for a claim, within three of its intervals. Vouchers are judged on
   * remembered channel states only while it does.
   */
  keepsUp(): boolean {
    const { claimIntervalMs, withdrawDelaySeconds } = this.config.chain.batchSettlement;
    if (claimIntervalMs <= 0 || claimIntervalMs * 4 > withdrawDelaySeconds * 1000) return false;
    return this.lastCompletedRunAt !== null && performance.now() - this.lastCompletedRunAt <= 3 * claimIntervalMs;
  }

  private async claimReceiver(
    batch: BatchSettlementChain,
    signer: ClaimSigner,
    visit: ReceiverVisit,
    withdrawals: Withdrawals,
    options: { force?: boolean; now?: Date },
    run: ClaimRun,
  ): Promise<void> {
    const receiver = visit.receiver as Address;
    const token = visit.token as Address;
    // A withdrawal's delay is its channel's deadline: every withdrawing channel is claimed this
    // run, ahead of the queue, however many channels (an attacker's, say) wait before it there:
    // those of the recent WithdrawInitiated events, and those seen withdrawing before (a read, or
    // an event since left the log window or read before a restart: withdrawalSeen).
    const withdrawing = await this.store.unclaimedAmong(signer, receiver, token, withdrawals.ids);
    // A settle or claim still on its way, whichever run sent it (this instance's before a restart,
    // or another's), is waited for, not sent again: each copy would be a no-op the relayer pays for.
    // Nothing is sent behind it either (it would wait on the relayer's nonce, and be sent again at
    // each run): not a run that kept up (keepsUp). The settle first: this run's claims would follow it.
    // Stuck, it is re-priced; as urgent when it carries an urgent channel or holds back an urgent
    // claim of this receiver's (urgencyOf).
    const now = options.now ?? new Date();
    const of = { chainId: this.chain.chainId, receiver, token };
    const settle = await this.onItsWay(await this.store.settlesOnTheirWay(of), {
      landed: (hash) => this.store.recordSettleLanded(of.chainId, hash),
      drop: (hash) => this.store.dropSettle(of.chainId, hash),
    });
    if (settle) {
      await this.repriceSentIfStuck(
        'settle',
        settle,
        () => this.urgencyOf(batch, withdrawing, now),
        (hash) => this.store.recordSettleReplacement(of.chainId, settle.txHash, hash),
      );
      throw new Error(`the settle ${settle.txHash} of an earlier run is not mined yet`);
    }
    const claim = await this.onItsWay(await this.store.claimsOnTheirWay(of), {
      landed: (hash) => this.store.recordClaimLanded(of.chainId, hash),
      drop: (hash) => this.store.dropClaim(of.chainId, hash),
    });
    if (claim) {
      const urgency = () => this.urgencyOf(batch, withdrawing, now, claim.txHash as Hex);
      await this.repriceSentIfStuck('claim', claim, urgency, (hash) =>
        this.store.recordClaimReplacement(of.chainId, claim.txHash, hash),
      );
      throw new Error(`the claim ${claim.txHash} of an earlier run is not mined yet`);
    }
    // Every withdrawing channel is read before any is claimed, so that all the urgent ones go first:
    // a routine claim refused for fees (a spike between the two maximums) stops the run, and would
    // otherwise hold back the urgent channels of the slices after it.
    await this.sendClaims(batch, receiver, token, await this.claimsOf(batch, withdrawing, now), options, run);
    // The node is asked about the queue only when the database shows it due, or cannot tell (receiversToVisit).
    if (visit.readQueue) {
      const { claimMaxChannels } = this.config.chain.batchSettlement;
      const queued = await this.store.unclaimed(signer, receiver, token, claimMaxChannels);
      await this.claimChannels(batch, receiver, token, queued, options, run);
    }
    const owed = await unsettled(this.chain, batch, receiver, token);
    if (owed === 0n) return;
    await this.settle(batch, of, owed, run);
  }

  /** Sends on what the escrow holds claimed for this receiver, and marks the landed claims settled by it once it lands. */
  private async settle(batch: BatchSettlementChain, of: ReceiverClaims, owed: bigint, run: ClaimRun): Promise<void> {
    const claimIds = await this.store.unsettledClaimIds(of);
    const call = await prepareRelayerCall(
      this.chain,
      batch.escrow,
      settleCalldata(of.receiver as Address, of.token as Address),
    ).catch(async (error: unknown) => {
      if (!isRevert(error)) throw error;
      throw await this.settleRevert(batch, of, owed, `the settle would revert: ${(error as Error).message}`);
    });
    // Written down once signed, before it is sent, as claims are (claimChannels).
    const hash = await broadcastFromRelayer(this.chain, call, 'claimer', (txHash, nonce) =>
      this.store.recordSettleSent({ ...of, txHash, nonce, claimIds }),
    );
    run.settles.push(hash);
    const receipt = await waitForReceipt(this.chain, hash, this.chain.settlementTimeoutMs);
    if (!receipt) throw new Error(`settle ${hash} not confirmed yet`);
    if (receipt.status !== 'success') {
      await this.store.dropSettle(of.chainId, hash);
      throw await this.settleRevert(batch, of, owed, `settle ${hash} reverted`);
    }
    await this.store.recordSettleLanded(of.chainId, hash);
  }

  /** A SettleReverted when the token refuses what is owed to this receiver alone (the relayer would get it); else an Error, which fails the run. */
  private async settleRevert(
    batch: BatchSettlementChain,
    of: ReceiverClaims,
    owed: bigint,
    why: string,
  ): Promise<Error> {
    const refusedAlone = await tokenRefusesOnly(this.chain, {
      token: of.token as Address,
      from: batch.escrow,
      to: of.receiver as Address,
      control: this.chain.relayer.account.address,
      amount: owed,
    });
    return refusedAlone
      ? new SettleReverted(why)
      : new Error(`${why}, and the token refuses it to no receiver alone (every settle would fail)`);
  }

  /**
   * The first of these transactions (claims or settles of one receiver, written down before their
   * broadcast) still on its way. The others are settled here: one mined meanwhile is recorded
   * `landed`; one that reverted, or that the chain does not know while its nonce went to another
   * transaction, did nothing and never will, and is dropped. One the chain does not know with its
   * nonce still free (a broadcast the node refused) holds nothing back; it is dropped once its nonce is taken.
   */
  private async onItsWay(
    sent: readonly SentTransaction[],
    on: { landed(hash: string): Promise<void>; drop(hash: string): Promise<void> },
  ): Promise<SentTransaction | undefined> {
    for (const one of sent) {
      const fate = await sentTransactionFate(this.chain, one);
      if (fate === 'pending') return one;
      if (fate === 'landed') await on.landed(one.txHash);
      else if (fate === 'reverted' || fate === 'dead') await on.drop(one.txHash);
    }
    return undefined;
  }

  /**
   * The urgency of a receiver's claim or settle stuck on its way, as the chain says now
   * (claimIsUrgent): `urgent` when one of its withdrawing channels (in the escrow's recent
   * WithdrawInitiated events, or seen withdrawing before: withdrawalSeen) is, as nothing of the
   * receiver's is sent behind the stuck one, or when the stuck claim `claimHash` itself carries an
   * urgent channel (read from its calldata). Otherwise routine: a stuck claim is never
   * re-priced past RELAYER_MAX_FEE_PER_GAS_WEI for a withdrawal that is not worth urgent fees or
   * not near its deadline.
   */
  private async urgencyOf(
    batch: BatchSettlementChain,
    withdrawing: readonly PaymentChannel[],
    now: Date,
    claimHash?: Hex,
  ): Promise<FeeUrgency> {
    const { claimMinMicros } = this.config.chain.batchSettlement;
    const urgent = (charged: bigint, state: OnChainChannel, withdrawDelaySeconds: number) =>
      claimIsUrgent(charged, state, { withdrawDelaySeconds, claimMinMicros, now });
    for (const channel of withdrawing)
      if (
        urgent(channel.charged, await readChannel(this.chain, batch, channel.channelId as Hex), channel.withdrawDelay)
      )
        return 'urgent';
    for (const row of claimHash ? await this.claimRowsOf(claimHash) : []) {
      const state = await readChannel(this.chain, batch, channelIdOf(this.chain, batch, row.voucher.channel));
      // What the stuck claim would record is what it protects.
      if (urgent(row.totalClaimed, state, row.voucher.channel.withdrawDelay)) return 'urgent';
    }
    return 'routine';
  }

  /**
   * The claim rows a claimWithSignature transaction of ours carries, from its calldata (claimsIn);
   * none when the node does not know it, or it is no claim.
   */
  private async claimRowsOf(hash: Hex) {
    const tx = await this.chain.publicClient.getTransaction({ hash }).catch(() => null);
    return tx ? claimsIn(tx.input) : [];
  }

  /**
   * Re-prices a claim or settle of ours stuck under the chain's fees (repriceIfStuck), up to the
   * maximum of `urgency`: its copy at the same nonce is written down before it is sent, and
   * whichever of the two lands is recorded. At that maximum it is left to wait, with a warning.
   */
  private async repriceSentIfStuck(
    kind: 'claim' | 'settle',
    sent: SentTransaction,
    urgencyOf: () => Promise<FeeUrgency>,
    record: (hash: Hex) => Promise<void>,
  ): Promise<void> {
    // Its urgency is read only once it is stuck: it costs a read of each channel it carries.
    const urgency = pendingTooLong(this.chain, sent.createdAt) ? await urgencyOf() : 'routine';
    const repricing = await repriceIfStuck(
      this.chain,
      sent.txHash as Hex,
      sent.createdAt,
      (hash) => record(hash),
      urgency,
    );
    logRepricing(this.logger, `the ${kind}`, sent.txHash as Hex, repricing);
    if (urgency === 'urgent' && sent.nonce !== null) await this.stuckAhead.liftAhead(sent.nonce);
  }

  /**
   * The channel's state at the latest block, what a claim sent now runs on (one already there needs
   * no other). What is recorded claimed, which takes the channel out of the queue, is only what the
   * configured confirmations hold: a claim a reorg can still take back (mined by a run that stopped
   * waiting, or another instance's) leaves the channel queued, to be claimed again if it is undone.
   * Whether it holds nothing more to claim is judged on the latest balance: a deposit not yet that
   * deep must not send it to the back of the queue.
   */
  private async readAndMarkClaimed(batch: BatchSettlementChain, channel: PaymentChannel): Promise<OnChainChannel> {
    const { confirmed, latest } = await readChannelAtBothDepths(this.chain, batch, channel.channelId as Hex);
    await this.judgeWithdrawal(batch, channel, latest);
    await this.store.markClaimed(channel.channelId, confirmed.totalClaimed, {
      balance: latest.balance,
      charged: channel.charged,
      readAgainAfterSeconds: claimDeadlineMs(channel.withdrawDelay, this.config.chain.batchSettlement) / 1000,
      // Seen withdrawing only while its withdrawal would take charged money: one asking back only
      // what is unspent (a unit, never finalized) must not keep it read ahead of the queue for good.
      withdrawing: withdrawalTakesCharged(channel.charged, latest),
    });
    return latest;
  }

  /**
   * Whether the channel's pending withdrawal takes nothing charged (unjudgedWithdrawals), judged on
   * the chain as of a block the escrow's log was read through, and as deep as the confirmations:
   * read there by number, a node behind it errs rather than answer an older state (one showing an
   * earlier, harmless withdrawal where a harmful one followed), and a shallow reorg cannot move an
   * event the verdict covers. Events after that block name the channel again.
   */
  private async judgeWithdrawal(batch: BatchSettlementChain, channel: PaymentChannel, latest: OnChainChannel) {
    // Harmless for any charge up to what the withdrawal leaves or was claimed (chargedAtStake); a
    // charge above that, harmless only while the balance caps what a claim takes, gets no verdict
    // (a deposit since, with no event, would let the withdrawal take some of it).
    const covers = (state: OnChainChannel) => maxOf(spendableOf(state), state.totalClaimed);
    const harmless = (state: OnChainChannel) =>
      state.withdrawal !== null && !withdrawalTakesCharged(channel.charged, state) && channel.charged <= covers(state);
    const logReadUpTo = this.withdrawalsReadUpTo;
    if (harmless(latest) && logReadUpTo !== undefined) {
      const confirmedNow = await confirmedBlockNow(this.chain);
      const at = confirmedNow < logReadUpTo ? confirmedNow : logReadUpTo;
      const state = await readChannel(this.chain, batch, channel.channelId as Hex, at).catch(() => undefined);
      if (state && harmless(state)) {
        await this.store.recordWithdrawalVerdict(channel.channelId, { logReadUpTo: at, coversUpTo: covers(state) });
        return;
      }
    }
    // A verdict on record is taken back only by a withdrawal read harmful: with none pending, any new
    // one comes with a later event; and a read that could not judge (no log read yet, a node
    // without that block) must not undo the verdicts a restart keeps.
    if (channel.harmlessWithdrawalBlock !== null && withdrawalTakesCharged(channel.charged, latest))
      await this.store.recordWithdrawalVerdict(channel.channelId, null);
  }

  /**
   * What these channels owe a claim, each read from the chain (readAndMarkClaimed), split into the
   * urgent ones (claimIsUrgent) and the others; a channel with nothing more to claim is in neither.
   */
  private async claimsOf(
    batch: BatchSettlementChain,
    channels: readonly PaymentChannel[],
    now: Date,
  ): Promise<{ urgent: ClaimOf[]; routine: ClaimOf[] }> {
    const settings = this.config.chain.batchSettlement;
    const urgent: ClaimOf[] = [];
    const routine: ClaimOf[] = [];
    for (const channel of channels) {
      const state = await this.readAndMarkClaimed(batch, channel);
      const claimTo = claimableTotal(channel.charged, state);
      if (claimTo < channel.charged)
        this.logger.error(
          `channel ${channel.channelId} is charged ${channel.charged} but holds ${state.balance}; claiming what it holds`,
        );
      if (claimTo <= state.totalClaimed || !channel.signature) continue;
      const one: ClaimOf = {
        channel,
        from: state.totalClaimed,
        takesCharged: withdrawalTakesCharged(channel.charged, state),
        withdrawableAt: withdrawableAt(channel.withdrawDelay, state),
        row: {
          config: configOf(channel),
          maxClaimableAmount: channel.charged,
          signature: channel.signature as Hex,
          totalClaimed: claimTo,
        },
      };
      const isUrgent = claimIsUrgent(channel.charged, state, {
        withdrawDelaySeconds: channel.withdrawDelay,
        claimMinMicros: settings.claimMinMicros,
        now,
      });
      (isUrgent ? urgent : routine).push(one);
    }
    return { urgent, routine };
  }

  /** Claims what these channels owe, when due (claimsOf, then sendClaims). */
  private async claimChannels(
    batch: BatchSettlementChain,
    receiver: Address,
    token: Address,
    channels: readonly PaymentChannel[],
    options: { force?: boolean; now?: Date },
    run: ClaimRun,
  ): Promise<void> {
    const claims = await this.claimsOf(batch, channels, options.now ?? new Date());
    await this.sendClaims(batch, receiver, token, claims, options, run);
  }

  /**
   * Claims what `claims` owe, when due, CLAIM_MAX_CHANNELS rows a claim: every urgent one first, in
   * claims of their own at urgent fees, then the others at routine fees (each recorded, its hash in
   * run.claims). An urgent channel never lifts the fees of one that is not. Of each, a channel whose
   * withdrawal may be finalized now and would take charged money goes first, in a claim of its own
   * (sendClaimAlone).
   */
  private async sendClaims(
    batch: BatchSettlementChain,
    receiver: Address,
    token: Address,
    claims: { urgent: ClaimOf[]; routine: ClaimOf[] },
    options: { force?: boolean; now?: Date },
    run: ClaimRun,
  ): Promise<void> {
    const now = options.now ?? new Date();
    const settings = this.config.chain.batchSettlement;
    const slices = (rows: ClaimOf[]) =>
      Array.from({ length: Math.ceil(rows.length / settings.claimMaxChannels) }, (_, i) =>
        rows.slice(i * settings.claimMaxChannels, (i + 1) * settings.claimMaxChannels),
      );
    // A withdrawal that would take charged money makes the claim due at once, at routine fees
    // while it is not urgent: the first half of its delay may wait out a fee spike.
    const due = (rows: ClaimOf[]) =>
      options.force ||
      amountOf(rows) >= settings.claimMinMicros ||
      rows.some((r) => r.takesCharged || isOverdue(r.channel, now, settings));
    // A payer whose withdrawal may be finalized now can finalize it just before a claim carrying its
    // channel is mined, and the escrow claims all or none: each channel that finalizing would make
    // revert is claimed alone, first. The others are batched (mayRevertAlone says why).
    const [finalizable, urgent] = partition(claims.urgent, (r) => mayRevertAlone(r, now));
    const [finalizableRoutine, routine] = partition(claims.routine, (r) => mayRevertAlone(r, now));
    for (const one of finalizable) await this.sendClaimAlone(batch, receiver, token, one, 'urgent', run);
    for (const rows of slices(urgent)) await this.sendClaim(batch, receiver, token, rows, 'urgent', run);
    for (const one of finalizableRoutine)
      if (due([one])) await this.sendClaimAlone(batch, receiver, token, one, 'routine', run);
    for (const rows of slices(routine))
      if (due(rows)) await this.sendClaim(batch, receiver, token, rows, 'routine', run);
  }

  /**
   * The claim of one channel whose payer may finalize now a withdrawal that would take charged money,
   * and so revert the claim (mayRevertAlone, sendClaims). Reverted, as
   * when that payer finalized first, it is logged and its channel read again (once finalized it holds
   * nothing more to claim, and no claim of it is sent again): no other channel's claim, nor the run,
   * fails with it.
   */
  private async sendClaimAlone(
    batch: BatchSettlementChain,
    receiver: Address,
    token: Address,
    one: ClaimOf,
    urgency: FeeUrgency,
    run: ClaimRun,
  ): Promise<void> {
    try {
      await this.sendClaim(batch, receiver, token, [one], urgency, run);
    } catch (error) {
      if (!(error instanceof ClaimReverted)) throw error;
      this.logger.error(
        `the claim of channel ${one.channel.channelId} for ${receiver}, whose withdrawal may be finalized since ${one.withdrawableAt?.toISOString()}, reverted (its payer may have finalized first); it is read again: ${error.message}`,
      );
      await this.readAndMarkClaimed(batch, one.channel);
    }
  }

  /** One claimWithSignature of these rows, at fees within the maximum of `urgency`. */
  private async sendClaim(
    batch: BatchSettlementChain,
    receiver: Address,
    token: Address,
    rows: readonly ClaimOf[],
    urgency: FeeUrgency,
    run: ClaimRun,
  ): Promise<void> {
    const amount = amountOf(rows);
    const withinCap = (fees: { maxFeePerGas: bigint }) => {
      try {
        assertFeesWithinCap(this.chain, fees, urgency);
      } catch (error) {
        if (urgency === 'urgent') this.logUrgentClaimHeld(receiver, rows, fees.maxFeePerGas);
        throw error;
      }
    };
    // Priced first, as a refund is: the gas estimate below already shows the node the claim's
    // calldata (every voucher in it), so a claim the relayer would not sign at these fees stops here,
    // its vouchers the payers' own; past here they are public, whatever is sent. It is sent at these
    // very fees: priced again by the node, a claim let through here could be refused after publishing.
    const fees = await this.chain.publicClient.estimateFeesPerGas();
    withinCap(fees);
    await this.store.markPublished(
      rows.map((r) => ({ channelId: r.channel.channelId, total: r.row.maxClaimableAmount })),
    );
    const data = await claimCalldata(
      this.chain,
      batch,
      rows.map((r) => r.row),
    );
    const call = await relayerCallAtFees(this.chain, batch.escrow, data, fees).catch((error: unknown) => {
      if (isRevert(error)) throw new ClaimReverted(`the claim would revert: ${(error as Error).message}`);
      throw error;
    });
    // Mined only after every lower nonce: whatever is stuck there goes up to the urgent maximum too.
    if (urgency === 'urgent') await this.stuckAhead.liftAhead();
    const of = { chainId: this.chain.chainId, receiver, token };
    // Written down once signed, before it is sent: whatever the broadcast answers, and whichever
    // instance runs next, it is waited for while on its way and recorded once landed (onItsWay).
    const hash = await broadcastFromRelayer(
      this.chain,
      call,
      'claimer',
      (txHash, nonce) => this.store.recordClaimSent({ ...of, txHash, nonce, channels: rows.length, amount }),
      urgency,
    );
    run.claims.push(hash);
    const receipt = await waitForReceipt(this.chain, hash, this.chain.settlementTimeoutMs);
    if (!receipt) throw new Error(`claim ${hash} not confirmed yet`);
    if (receipt.status !== 'success') {
      await this.store.dropClaim(this.chain.chainId, hash);
      throw new ClaimReverted(`claim ${hash} reverted`);
    }
    // Recorded landed before its channels are marked claimed: a run stopped between the two leaves
    // a claim with no settle, whose receiver the next run visits. The other way round, nothing led a
    // run back to it, and what it claimed stayed in the escrow until the receiver's next voucher.
    await this.store.recordClaimLanded(this.chain.chainId, hash);
    // Read back what the chain now says, rather than assume the rows applied.
    for (const { channel } of rows) await this.readAndMarkClaimed(batch, channel);
    this.logger.log(`claimed ${amount} from ${rows.length} channel(s) for ${receiver} in ${hash}`);
  }

  /** An urgent claim held even by RELAYER_URGENT_MAX_FEE_PER_GAS_WEI: past the deadlines, its payers take back what they were charged. */
  private logUrgentClaimHeld(
    receiver: Address,
    urgent: readonly { channel: PaymentChannel; withdrawableAt: Date | null }[],
    asked: bigint,
  ): void {
    const cap = feeCap(this.chain, 'urgent');
    const channels = urgent
      .map(({ channel, withdrawableAt }) => `${channel.channelId} (withdrawable from ${withdrawableAt?.toISOString()})`)
      .join(', ');
    this.logger.error(
      `the urgent claim for ${receiver} is not sent: the chain asks ${asked} wei per gas, more than ${cap.setting} (${cap.maxFeePerGas}); once their withdrawals may be finalized, the payers of ${channels} take back what they were charged and nobody claimed. The next run tries again`,
    );
  }

  /**
   * This signer's unclaimed channels whose payer started a withdrawal lately: the escrow's
   * WithdrawInitiated events of those channels (the event indexes its channel: the escrow is
   * shared, and anyone's channels could fill its log past what a node answers) over the last
   * RECENT_LOG_BLOCKS (chain.recentLogBlocks), and back to the block after the last read when that
   * is further (runs further apart than those blocks must not leave a withdrawal between two reads
   * unseen); read once a run (a call per WITHDRAWAL_QUERY_CHANNELS channels, or a few more on a
   * node capping eth_getLogs's range), less those a read since their last event found taking
   * nothing charged (unjudgedWithdrawals). Each is recorded seen withdrawing (markWithdrawalsSeen),
   * so it stays among its receiver's withdrawing channels past that window and a restart.
   */
  private async withdrawingChannelIds(
    batch: BatchSettlementChain,
    unclaimed: readonly UnclaimedChannel[],
  ): Promise<string[]> {
    const head = await this.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const recent = firstRecentBlock(this.chain, head);
    const readUpTo = this.withdrawalsReadUpTo;
    const since = readUpTo !== undefined && readUpTo < recent ? readUpTo + 1n : recent;
    const logs = [];
    for (let first = 0; first < unclaimed.length; first += WITHDRAWAL_QUERY_CHANNELS) {
      const channelId = unclaimed.slice(first, first + WITHDRAWAL_QUERY_CHANNELS).map((c) => c.channelId as Hex);
      logs.push(
        ...(await eventsInSpans(this.chain.logSpan, since, head, (fromBlock, toBlock) =>
          this.chain.publicClient.getContractEvents({
            address: batch.escrow,
            abi: BATCH_SETTLEMENT_ABI,
            eventName: 'WithdrawInitiated',
            args: { channelId },
            fromBlock,
            toBlock,
          }),
        )),
      );
    }
    const lastEventOf = new Map<string, bigint>();
    for (const { args, blockNumber } of logs) {
      const id = args.channelId?.toLowerCase();
      if (id && blockNumber !== null && blockNumber >= (lastEventOf.get(id) ?? 0n)) lastEventOf.set(id, blockNumber);
    }
    const ids = unjudgedWithdrawals(lastEventOf, unclaimed);
    // Remembered past the window and a restart (unclaimedAmong), before the read is counted done.
    await this.store.markWithdrawalsSeen(ids);
    this.withdrawalsReadUpTo = head;
    return ids;
  }
}

/** The escrow's withdrawals as a run read them (withdrawingChannelIds). */
interface Withdrawals {
  /** The unclaimed channels of the recent WithdrawInitiated events, less those judged harmless since (unjudgedWithdrawals). */
  ids: readonly string[];
  /** The log was read: a channel neither among `ids` nor seen withdrawing before is not withdrawing, as far as the run can tell. */
  read: boolean;
}

/** Whether the channel's oldest voucher not claimed is past its deadline (claimDeadlineMs): due whatever its amount. */
function isOverdue(
  { unclaimedSince, withdrawDelay }: Pick<PaymentChannel, 'unclaimedSince' | 'withdrawDelay'>,
  now: Date,
  settings: { claimMaxAgeSeconds: number; claimIntervalMs: number },
): boolean {
  return (
    unclaimedSince !== null && now.getTime() - unclaimedSince.getTime() >= claimDeadlineMs(withdrawDelay, settings)
  );
}

/** A receiver (in one token) a run visits, and why. */
export interface ReceiverVisit {
  receiver: string;
  token: string;
  /** A payer of its channels is withdrawing: its deadline runs, and no time limit leaves it. */
  withdrawing: boolean;
  /** A voucher of its is past its age deadline (claimDeadlineMs). */
  overdue: boolean;
  /**
   * A voucher of its is half its withdraw delay old: no time limit leaves it. A withdrawal the log
   * never showed (started before its window, or lost to the node) may then be finalized within the
   * other half, and only this visit stands in the way.
   */
  late: boolean;
  /** Its queue is read from the node: the database shows it due, or the run cannot tell (readEveryQueue). */
  readQueue: boolean;
  /** Since when it waits: its oldest voucher not claimed, or claim not settled. */
  since: Date;
}

/**
 * The receivers a run visits, in order: those with a payer withdrawing (their deadline runs), those
 * with a voucher half its withdraw delay old (late), then past its age deadline (overdue: the net
 * under a withdrawal the log did not show), those otherwise due, then those owed only a settle
 * (what their claims collected is in the escrow, credited to them, out of any payer's reach), each
 * longest-waiting first, so a receiver a run left for lack of time (pastBudget) comes first in the
 * next. Only withdrawing and late receivers are exempt from that limit: an overdue receiver costs a
 * claim and a settle (receipt waits), and anyone can make many overdue at once (receivers of their
 * own, a voucher each, an age deadline later). A receiver with none of these is not visited: it
 * would cost a run reads and time for nothing.
 *
 * Due by the database: what was charged above what is recorded claimed reaches CLAIM_MIN_MICROS
 * (on channels not pushed behind the queue: markClaimed), a voucher is past its age deadline, or a
 * claim of ours (or a refund) put vouchers above what is recorded claimed into calldata, which the
 * chain may hold claimed by now (recorded once read). One it shows not due needs no read of the
 * node while the escrow's log was read: the chain can only show less to claim (its total claimed is
 * at least the one recorded, and a claim reaches at most what was charged), and its one other
 * reason to claim (a withdrawal taking what was charged) is what the log tells (less the
 * withdrawals judged harmless: unjudgedWithdrawals), or, older than the log's window, is overtaken
 * by the age deadline, well inside any withdrawal's delay. A queue due by the sum of all its
 * receiver's channels may still not be due in its first CLAIM_MAX_CHANNELS: read, and left.
 */
export function receiversToVisit(
  unclaimed: readonly UnclaimedOfReceiver[],
  unsettled: readonly { receiver: string; token: string; since: Date }[],
  {
    now,
    settings,
    readEveryQueue,
  }: {
    now: Date;
    settings: { claimMinMicros: bigint; claimMaxAgeSeconds: number; claimIntervalMs: number };
    /** A forced run, or one that could not read the escrow's log. */
    readEveryQueue: boolean;
  },
): ReceiverVisit[] {
  const keyOf = ({ receiver, token }: { receiver: string; token: string }) => `${receiver}/${token}`;
  const byReceiver = new Map<string, ReceiverVisit & { owed: bigint; published: boolean }>();
  for (const group of unclaimed) {
    const seen = byReceiver.get(keyOf(group));
    const overdue = isOverdue({ unclaimedSince: group.since, withdrawDelay: group.withdrawDelay }, now, settings);
    const late = now.getTime() - group.since.getTime() >= (group.withdrawDelay * 1000) / 2;
    byReceiver.set(keyOf(group), {
      receiver: group.receiver,
      token: group.token,
      withdrawing: (seen?.withdrawing ?? false) || group.withdrawing,
      overdue: (seen?.overdue ?? false) || overdue,
      late: (seen?.late ?? false) || late,
      readQueue: readEveryQueue,
      since: seen && seen.since < group.since ? seen.since : group.since,
      owed: (seen?.owed ?? 0n) + group.owed,
      published: (seen?.published ?? false) || group.published,
    });
  }
  const visits = new Map<string, ReceiverVisit & { rank: number }>();
  for (const { owed, published, ...visit } of byReceiver.values()) {
    const readQueue = visit.readQueue || visit.overdue || published || owed >= settings.claimMinMicros;
    const rank = visit.withdrawing ? 0 : visit.late ? 1 : visit.overdue ? 2 : 3;
    if (visit.withdrawing || readQueue) visits.set(keyOf(visit), { ...visit, readQueue, rank });
  }
  for (const one of unsettled) {
    const visit = visits.get(keyOf(one));
    if (!visit)
      visits.set(keyOf(one), { ...one, withdrawing: false, overdue: false, late: false, readQueue: false, rank: 4 });
    else if (one.since < visit.since) visit.since = one.since;
  }
  return [...visits.values()]
    .sort((a, b) => a.rank - b.rank || a.since.getTime() - b.since.getTime())
    .map(({ rank: _rank, ...visit }) => visit);
}

/** A channel's row in a claim, as this run read it. */
interface ClaimOf {
  channel: PaymentChannel;
  row: ClaimRow;
  /** What the chain held claimed of it. */
  from: bigint;
  /** Its pending withdrawal would take charged money (withdrawalTakesCharged). */
  takesCharged: boolean;
  withdrawableAt: Date | null;
}

/** Whether the channel's pending withdrawal may be finalized at `now` (its delay is over). */
function mayBeFinalized({ withdrawableAt }: ClaimOf, now: Date): boolean {
  return withdrawableAt !== null && withdrawableAt.getTime() <= now.getTime();
}

/**
 * Whether the channel's payer can make its claim revert now: its withdrawal may be finalized and
 * would take charged money. One that takes none (a unit, never finalized) leaves the claim within
 * the balance less the withdrawal, which finalizing cannot revert: batched, it costs no claim of its own.
 */
function mayRevertAlone(claim: ClaimOf, now: Date): boolean {
  return claim.takesCharged && mayBeFinalized(claim, now);
}

/** The rows `test` holds for, and the others, each in their order. */
function partition<T>(rows: readonly T[], test: (row: T) => boolean): [T[], T[]] {
  return [rows.filter(test), rows.filter((row) => !test(row))];
}

function maxOf(...values: bigint[]): bigint {
  return values.reduce((max, value) => (value > max ? value : max));
}

function amountOf(rows: readonly ClaimOf[]): bigint {
  return rows.reduce((sum, r) => sum + (r.row.totalClaimed - r.from), 0n);
}

function configOf(channel: PaymentChannel) {
  return {
    payer: channel.payer as Hex,
    payerAuthorizer: channel.payerAuthorizer as Hex,
    receiver: channel.receiver as Hex,
    receiverAuthorizer: channel.receiverAuthorizer as Hex,
    token: channel.token as Hex,
    withdrawDelay: channel.withdrawDelay,
    salt: channel.salt as Hex,
  };
}

/**
 * How old a channel's oldest unclaimed voucher may grow before a claim (ms): never older than a
 * quarter of the channel's own withdraw delay, the one it was opened with (a restart with a longer
 * BATCH_WITHDRAW_DELAY_SECONDS must not give the channels before it longer), so that should the
 * escrow's withdrawals be unreadable (withdrawingChannelIds failed), the queue still moves well
 * inside any withdrawal's delay. 0, claimed at every run, when this claimer's runs are further apart
 * than that quarter.
 */
export function claimDeadlineMs(
  withdrawDelaySeconds: number,
  { claimMaxAgeSeconds, claimIntervalMs }: { claimMaxAgeSeconds: number; claimIntervalMs: number },
): number {
  const quarterDelayMs = (withdrawDelaySeconds * 1000) / 4;
  if (claimIntervalMs > quarterDelayMs) return 0;
  return Math.min(claimMaxAgeSeconds * 1000, quarterDelayMs);
}

/**
 * Whether `last` is a run recent enough for vouchers (ClaimerService.someoneKeepsUp): within three
 * intervals of the instance that made it, or of this one's own claimer when it runs one (it runs
 * as often itself), and never more than a quarter of the withdraw delay ago. A run made only when
 * asked (interval 0) counts that quarter.
 */
export function isRecent(
  last: ClaimerHeartbeat | undefined,
  { withdrawDelaySeconds, claimIntervalMs }: { withdrawDelaySeconds: number; claimIntervalMs: number },
): boolean {
  if (!last) return false;
  const quarterDelayMs = (withdrawDelaySeconds * 1000) / 4;
  // A claimer whose runs are further apart than that (another instance's, configured for a longer
  // delay) would come back too late for this one's channels, however lately it ran.
  if (last.intervalMs > quarterDelayMs) return false;
  const writers = last.intervalMs > 0 ? 3 * last.intervalMs : quarterDelayMs;
  return last.ageMs <= Math.min(quarterDelayMs, Math.max(writers, 3 * claimIntervalMs));
}
