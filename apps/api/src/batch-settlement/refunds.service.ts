import { BATCH_REASONS, type BatchSettlementPayment, type RefundedChannel } from '@crawlgate/core';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Hash, Hex } from 'viem';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import {
  claimCalldata,
  directRefundCalldata,
  multicallCalldata,
  readChannel,
  readChannelAtBothDepths,
  readChannelAtConfirmedDepth,
  refundCalldata,
  refundedIn,
  settleCalldata,
  type OnChainChannel,
} from '../chain/escrow';
import { logRepricing, ReplacementNotRecorded, repriceIfStuck } from '../chain/fee-bump';
import { isRevert } from '../chain/revert';
import { CHAIN } from '../chain/tokens';
import type { Gate } from '../gates/gates.service';
import { unavailable } from '../http/api-error';
import {
  chainUnavailable,
  isChainUnreachable,
  nothingSentAnswer,
  onChain,
  revertMessage,
} from '../payments/chain-errors';
import { PaymentRejected } from '../payments/payment-rejected';
import { assertFeesWithinCap, broadcastFromRelayer, relayerCall, waitForReceipt } from '../payments/settlement';
import { chargedBase, channelState, claimableTotal, correction, publicTotal, spendableOf } from './channel-state';
import { ChannelStore, refundHashes, type HeldChannel, type RefundHold, type RefundRecord } from './channel.store';
import { notFoundAsNull, relayerNonceUsed } from '../chain/transaction-state';

/** A hold whose refund was never signed into a transaction is the holder's only until this old: it died, or its chain calls hung. */
const UNSIGNED_HOLD_SECONDS = 120;
/**
 * Gas over the estimate of the same calls with the authorizer's direct refund: the signature's
 * check and calldata, and headroom so that a state change before it is mined (a payer moving its
 * funds, starting a withdrawal) cannot run it out of gas.
 */
const GAS_HEADROOM = (estimate: bigint) => (estimate * 13n) / 10n + 30_000n;

/** How many held channels one background run looks at, the longest held first. */
const HOLDS_PER_RUN = 100;

/** The answer while a cooperative refund holds the channel: x402's "channel busy", nothing charged. */
export function refundInFlight(): PaymentRejected {
  return new PaymentRejected(
    BATCH_REASONS.channelBusy,
    'A refund of this channel is in flight; vouchers are taken again once it has landed. Ask again shortly',
  );
}

/** A refund of the hold's nonce as deep as the confirmations, and the channel as of that depth. */
type Landed = { landed: OnChainChannel };

/** Landed when `confirmed` (the channel as deep as the confirmations) shows the refund nonce moved past `nonce`. */
const landedIn = (confirmed: OnChainChannel, nonce: bigint): Landed | null =>
  confirmed.refundNonce > nonce ? { landed: confirmed } : null;

/**
 * Where a hold's refund is, from the chain's word. `landed` ends it; `unsigned` (no transaction
 * stored when read) ends it only if still so and stale when ended (ChannelStore.endUnsignedHold).
 */
type RefundFate = Landed | 'unsigned' | 'in flight' | 'failed';

/** The refund's hold was released as stale, or its transaction sent or re-priced by another, before this one was stored: it is never sent. */
class HoldLost extends Error {}

/** A refund signature may be out (stored, maybe broadcast): the hold must stay; `answer` is what the payer is told. */
class SignatureOut extends Error {
  constructor(readonly answer: Error) {
    super(answer.message);
  }
}

/**
 * x402's cooperative refund: the payer, with its voucher for exactly what the channel has been
 * charged, asks for the rest of its deposit back now rather than after the withdraw delay. One
 * relayer transaction claims that voucher and settles it to the receiver, then refunds, so the
 * receiver is paid for every voucher taken before any money goes back.
 *
 * While the refund is in flight it holds the channel (channel.store.ts): no voucher is taken, so
 * none is accepted against funds the refund returns. A refund signature names the channel's
 * refund nonce and never expires, and anyone who saw it (the node, a mined transaction that
 * reverted) can send it: once it is signed into a transaction, the hold ends only when the chain's
 * refund nonce moved, as deep as the confirmations. A refund that failed is sent again when the
 * payer asks again. Only a hold whose signature never left (no transaction stored) ends otherwise,
 * once stale. The simulation and the gas estimate use the authorizer's direct refund, so they show
 * the node no signature.
 */
@Injectable()
export class RefundsService {
  private readonly logger = new Logger('Refunds');
  /** The last hold the background sweep looked at (endHoldsOver). */
  private sweptUpTo?: HeldChannel;

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly store: ChannelStore,
  ) {}

  /** `payment` is a refund payload whose channel and payer signature the caller checked. */
  async refund(
    gate: Gate,
    payment: BatchSettlementPayment,
    channelId: Hex,
  ): Promise<{ kind: 'refunded'; body: RefundedChannel }> {
    const batch = this.chain.batchSettlement!;
    const { channelConfig: config, voucher } = payment;
    let state = await this.read(channelId);
    let record = await this.currentRecord(channelId, payment, state);
    /** Set when this request sends again a refund whose signed transaction failed: its hold is kept. */
    let retried: RefundHold | undefined;
    if (record.hold) {
      const fate = await this.fateOf(channelId, record.hold, state);
      if (fate === 'failed') retried = record.hold;
      else if (fate === 'in flight' || !(await this.endHold(channelId, record.hold, fate))) throw refundInFlight();
      else {
        state = await this.read(channelId);
        record = await this.currentRecord(channelId, payment, state);
      }
    }
    const charged = chargedBase(record, state);
    if (voucher.maxClaimableAmount !== charged)
      throw correction(channelId, charged, record, state, charged, voucher.maxClaimableAmount);
    if (!retried && record.refundedCharged === charged)
      throw new PaymentRejected(
        BATCH_REASONS.refundPayload,
        'A refund was already made with the voucher for this total; pay a page before asking for another',
      );
    // A pending withdrawal may be finalized ahead of our transaction, before anything charged is
    // claimed, and the refund call lifted from it sent alone after: only what neither takes is the payer's.
    const room = spendableOf(state) - charged;
    if (!retried && room <= 0n)
      throw new PaymentRejected(
        BATCH_REASONS.refundNoBalance,
        'The channel holds nothing beyond what it was charged and what its pending withdrawal takes',
      );
    // A voucher a claim carried is in public calldata: anyone could send it, so it asks nothing back.
    if (!retried && charged <= publicTotal(record, state))
      throw new PaymentRejected(
        BATCH_REASONS.refundPayload,
        'The voucher for this total is public (a claim transaction carried it), so it cannot ask for a refund: pay a page and ask with its voucher, or withdraw (initiateWithdraw, then finalizeWithdraw after the delay)',
      );
    // A refund sent again asks what it first asked: its voucher is public once its transaction
    // failed, and a request sending it again for 1 unit would use the refund up. Asking for more
    // gets the room. A refund sent again only has to move the nonce (the escrow refunds nothing
    // when nothing is left).
    const wanted = retried?.amount ?? payment.refundAmount;
    const asked = wanted !== undefined && wanted < room ? wanted : room;
    const amount = asked > 0n ? asked : 1n;

    const hold = retried?.id ?? randomUUID();
    const holdNonce = retried?.nonce ?? state.refundNonce;
    if (!retried && !(await this.store.holdForRefund({ channelId, id: hold, charged, nonce: holdNonce, amount })))
      throw refundInFlight(); // a voucher or another refund moved the channel since it was read
    let hash: Hash;
    try {
      hash = await this.send(
        batch,
        payment,
        channelId,
        { id: hold, follows: retried?.tx ?? null },
        { charged, amount, state },
      );
    } catch (error) {
      if (error instanceof SignatureOut) throw error.answer;
      // Nothing signed left this process: a fresh hold simply ends; a retried one keeps its older signature out.
      if (!retried) await this.store.endRefund(channelId, hold, false);
      throw error;
    }
    // The sweep may re-price it meanwhile: its replacement's receipt is this refund's too.
    const receipt = await waitForReceipt(this.chain, hash, this.chain.settlementTimeoutMs, (mined) =>
      this.sentForHold(channelId, hold, mined.transactionHash),
    ).catch((error: unknown) => {
      if (isChainUnreachable(error)) return null;
      throw error;
    });
    // Not confirmed in time: the hold stays, and is ended by whoever next finds its nonce moved that deep.
    if (!receipt) throw unavailable('The refund is sent and not confirmed yet; ask again shortly');
    const { confirmed, latest: after } = await onChain(() => readChannelAtBothDepths(this.chain, batch, channelId));
    // The hold ends once a refund of its nonce is as deep as the confirmations: this one, or when it
    // reverted, an earlier signature of the same nonce, which may have landed after it (shallower).
    // Else it stays, for the next voucher or the background sweep to end.
    const landed = landedIn(confirmed, holdNonce);
    if (landed) await this.endHold(channelId, { id: hold }, landed);
    if (receipt.status !== 'success')
      throw new PaymentRejected(
        BATCH_REASONS.refundTransactionFailed,
        landed
          ? 'The refund transaction reverted, but an earlier refund of this channel landed: its state shows what came back'
          : 'The refund transaction reverted; the channel takes no voucher until a refund lands. Ask again to send it again',
      );
    const refunded = refundedIn(receipt, batch, channelId);
    this.logger.log(`refunded ${refunded} of channel ${channelId} to ${config.payer} in ${receipt.transactionHash}`);
    return {
      kind: 'refunded',
      body: {
        status: 'refunded',
        gate_id: gate.id,
        channel_id: channelId,
        payer: config.payer.toLowerCase(),
        refund_amount: refunded.toString(),
        refund_tx_hash: receipt.transactionHash,
        network: this.chain.network.name,
        channel_state: channelState(channelId, after, charged),
      },
    };
  }

  /**
   * Ends the channel's refund hold if its refund landed, or was never signed and is stale; true
   * when no hold remains. Vouchers call it when they find the channel held. `reprice` (the
   * background sweep only): a refund still in flight and stuck under the chain's fees is re-priced.
   */
  async releaseIfOver(channelId: Hex, { reprice = false } = {}): Promise<boolean> {
    const record = await this.store.refundRecord(channelId);
    if (!record?.hold) return true;
    const state = await this.read(channelId);
    const fate = await this.fateOf(channelId, record.hold, state);
    if (fate === 'in flight' && reprice) await this.repriceStuckRefund(channelId, record.hold);
    if (fate === 'in flight' || fate === 'failed') return false;
    return this.endHold(channelId, record.hold, fate);
  }

  /**
   * Re-prices the hold's refund stuck under the chain's fees (repriceIfStuck), as the claimer does
   * claims: its pending transaction is sent again at its nonce, the new hash stored before it is sent
   * (only while the hold still has the hash read here), the earlier ones kept, as any of them may be
   * mined. At the maximum fee it is left to wait, with a warning.
   */
  private async repriceStuckRefund(channelId: Hex, hold: RefundHold): Promise<void> {
    const current = hold.tx;
    if (current === null || hold.txSentAt === null) return;
    const record = async (hash: Hash, nonce: number) => {
      if (!(await this.store.recordRefundReplacement(channelId, hold.id, current, hash, nonce)))
        throw new ReplacementNotRecorded();
    };
    for (const hash of refundHashes(hold)) {
      const repricing = await repriceIfStuck(this.chain, hash, hold.txSentAt, record);
      logRepricing(this.logger, `the refund of channel ${channelId}`, hash, repricing);
      // Only one of them is pending at a time (one nonce): the others are not looked at further.
      if (repricing.kind !== 'waiting') return;
    }
  }

  /**
   * Ends, in the background, the holds that are over: refunds that landed after their request
   * stopped waiting (a timeout, a restart), and holds never signed whose holder is gone. Without it
   * they end only when the payer comes back to the channel, and until then the channel's record
   * (what the dashboard shows as still in channels) is behind the chain. A refund that failed is
   * left held, as the request path leaves it: only the payer asking again sends it again.
   * Returns how many holds ended.
   */
  async endHoldsOver(limit = HOLDS_PER_RUN): Promise<number> {
    if (!this.chain.batchSettlement) return 0;
    // Each run goes on from where the last one stopped, back to the start once past the last hold:
    // holds that stay held (a refund that may still land, or failed) never keep the others unseen.
    const held = await this.store.heldForRefund(limit, this.sweptUpTo);
    this.sweptUpTo = held.length < limit ? undefined : held[held.length - 1];
    let ended = 0;
    for (const { channelId } of held) {
      const over = await this.releaseIfOver(channelId as Hex, { reprice: true }).catch((error: Error) => {
        this.logger.warn(`refund hold of channel ${channelId} not checked; the next run tries again: ${error.message}`);
        return false;
      });
      if (over) ended++;
    }
    return ended;
  }

  /** Whether `hash` was sent for hold `id`'s refund: the original, or a re-priced copy at its nonce. */
  private async sentForHold(channelId: Hex, id: string, hash: Hash): Promise<boolean> {
    const hold = (await this.store.refundRecord(channelId))?.hold;
    return hold?.id === id && refundHashes(hold).includes(hash.toLowerCase() as Hash);
  }

  private read(channelId: Hex): Promise<OnChainChannel> {
    return onChain(() => readChannel(this.chain, this.chain.batchSettlement!, channelId));
  }

  /**
   * A refund of `nonce` landed once the chain's refund nonce moved past it as deep as the
   * confirmations. Ended before (the channel recorded claimed, out of the claimer's queue), a reorg
   * dropping the refund would leave what it claimed unclaimed, for the payer to withdraw.
   */
  private async landedDeep(channelId: Hex, nonce: bigint): Promise<Landed | null> {
    const confirmed = await onChain(() =>
      readChannelAtConfirmedDepth(this.chain, this.chain.batchSettlement!, channelId),
    );
    return landedIn(confirmed, nonce);
  }

  /** The channel's record for a refund: opened (or raised) to the chain's claimed total first, as vouchers do. */
  private async currentRecord(
    channelId: Hex,
    payment: BatchSettlementPayment,
    state: OnChainChannel,
  ): Promise<RefundRecord> {
    let record = await this.store.refundRecord(channelId);
    if (!record || record.charged < state.totalClaimed) {
      const batch = this.chain.batchSettlement!;
      await this.store.open(
        { channelId, chainId: this.chain.chainId, escrow: batch.escrow, config: payment.channelConfig },
        state.totalClaimed,
      );
      record = await this.store.refundRecord(channelId);
    }
    return record!;
  }

  /**
   * The claim (when anything charged is unclaimed), the settle (left out when it alone reverts),
   * and the refund, in one transaction, stored before it is broadcast. Simulated and estimated first
   * with the authorizer's direct refund in place of the signed one, so no refund signature exists
   * until the transaction is signed.
   */
  private async send(
    batch: BatchSettlementChain,
    payment: BatchSettlementPayment,
    channelId: Hex,
    hold: { id: string; follows: string | null },
    { charged, amount, state }: { charged: bigint; amount: bigint; state: OnChainChannel },
  ): Promise<Hash> {
    const { channelConfig: config, voucher } = payment;
    const client = this.chain.publicClient;
    // Priced first: a refund the relayer would not sign at these fees must not mark its voucher public.
    const fees = await onChain(() => client.estimateFeesPerGas());
    assertFeesWithinCap(this.chain, fees);
    const claim: Hex[] = [];
    const settle: Hex[] = [];
    const claimTo = claimableTotal(charged, state);
    if (claimTo > state.totalClaimed) {
      await this.store.markPublished([{ channelId, total: charged }]);
      const row = { config, maxClaimableAmount: charged, signature: voucher.signature, totalClaimed: claimTo };
      claim.push(await claimCalldata(this.chain, batch, [row]));
      settle.push(settleCalldata(config.receiver, config.token));
    }
    const estimate = (calls: Hex[]) =>
      client.estimateGas({
        account: batch.authorizer.address,
        to: batch.escrow,
        data: multicallCalldata([...calls, directRefundCalldata(config, amount)]),
      });
    let calls = [...claim, ...settle];
    let gas: bigint;
    try {
      gas = GAS_HEADROOM(
        await estimate(calls).catch((error: unknown) => {
          // The settle reverting (the token refuses the receiver: a blacklisted payout address) would
          // keep the payer's rest in escrow until a timed withdrawal: the refund goes without it, what
          // was charged claimed, credited to the receiver in the escrow.
          if (settle.length === 0 || !isRevert(error)) throw error;
          calls = claim;
          return estimate(calls);
        }),
      );
    } catch (error) {
      if (isChainUnreachable(error)) throw chainUnavailable();
      throw new PaymentRejected(
        BATCH_REASONS.refundSimulationFailed,
        `The refund would revert: ${revertMessage(error).slice(0, 200)}`,
      );
    }
    const data = multicallCalldata([
      ...calls,
      await refundCalldata(this.chain, batch, config, amount, state.refundNonce),
    ]);
    const call = relayerCall(this.chain, batch.escrow, data, gas, fees);
    let stored = false;
    try {
      return await broadcastFromRelayer(this.chain, call, { payee: config.receiver }, async (hash, nonce) => {
        if (!(await this.store.setRefundTx(channelId, hold.id, hold.follows, hash, nonce))) throw new HoldLost();
        stored = true;
      });
    } catch (error) {
      if (error instanceof HoldLost) throw refundInFlight();
      if (!stored) throw error;
      // Stored, maybe broadcast: the hold stays until the refund nonce moves; asking again sends it again if it failed.
      throw new SignatureOut(
        nothingSentAnswer(error) ?? unavailable('The refund may have been sent; ask again shortly'),
      );
    }
  }

  /**
   * Ends `hold` as `fate` says; true when it ended. A landed refund also moves the claimed total (to
   * the landing's confirmed read: the claimer's queue is left by it) and what vouchers must have
   * seen; an unsigned hold ends only if still unsigned and stale.
   */
  private async endHold(channelId: Hex, hold: Pick<RefundHold, 'id'>, fate: Landed | 'unsigned'): Promise<boolean> {
    if (fate === 'unsigned') return this.store.endUnsignedHold(channelId, hold.id, UNSIGNED_HOLD_SECONDS);
    await this.store.markClaimed(channelId, fate.landed.totalClaimed);
    await this.store.endRefund(channelId, hold.id, true);
    return true;
  }

  private async fateOf(channelId: Hex, hold: RefundHold, state: OnChainChannel): Promise<RefundFate> {
    const landedOnceDeep = async (): Promise<RefundFate> =>
      (await this.landedDeep(channelId, hold.nonce)) ?? 'in flight';
    if (state.refundNonce > hold.nonce) return landedOnceDeep();
    const txNonce = hold.txNonce;
    if (hold.tx === null || txNonce === null) return 'unsigned';
    const client = this.chain.publicClient;
    // Every hash sent for it, all at its nonce: a re-priced refund's original may be the one mined.
    const hashes = refundHashes(hold);
    const receipts = await Promise.all(
      hashes.map((hash) => onChain(() => client.getTransactionReceipt({ hash })).catch(notFoundAsNull)),
    );
    // Mined and successful, the nonce moved after `state` was read. Reverted: failed.
    if (receipts.some((receipt) => receipt?.status === 'success')) return landedOnceDeep();
    if (receipts.some((receipt) => receipt)) return 'failed';
    for (const hash of hashes)
      if (await onChain(() => client.getTransaction({ hash })).catch(notFoundAsNull)) return 'in flight';
    // Unknown to the node: it can still land only while its relayer nonce is unused.
    return (await onChain(() => relayerNonceUsed(this.chain, txNonce))) ? 'failed' : 'in flight';
  }
}
