import { BATCH_REASONS, type BatchSettlementPayment, type RefundedChannel } from '@crawlgate/core';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { keccak256, type Hash, type Hex } from 'viem';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import {
  claimCalldata,
  multicallCalldata,
  readChannel,
  refundCalldata,
  refundedIn,
  settleCalldata,
  type OnChainChannel,
} from '../chain/escrow';
import { CHAIN } from '../chain/tokens';
import type { Gate } from '../gates/gates.service';
import { unavailable } from '../http/api-error';
import {
  broadcastMayHaveLanded,
  chainUnavailable,
  isChainUnreachable,
  onChain,
  revertMessage,
} from '../payments/chain-errors';
import { PaymentRejected } from '../payments/payment-rejected';
import { prepareRelayerCall, waitForReceipt } from '../payments/settlement';
import { chargedBase, channelState, correction } from './channel-state';
import { ChannelStore, type RefundHold, type RefundRecord } from './channel.store';

/** A hold whose transaction was never signed is the holder's only until this old: it died, or its chain calls hung. */
const UNSIGNED_HOLD_MS = 120_000;

/** The answer while a cooperative refund holds the channel: x402's "channel busy", nothing charged. */
export function refundInFlight(): PaymentRejected {
  return new PaymentRejected(
    BATCH_REASONS.channelBusy,
    'A refund of this channel is in flight; vouchers are taken again once it is over. Ask again shortly',
  );
}

/** The refund's hold was released as stale before its transaction was stored: it is never sent. */
class HoldLost extends Error {}

/**
 * x402's cooperative refund: the payer, with its voucher for exactly what the channel has been
 * charged, asks for the rest of its deposit back now rather than after the withdraw delay. One
 * relayer transaction claims that voucher and settles it to the receiver, then refunds, so the
 * receiver is paid for every voucher taken before any money goes back.
 *
 * While the refund is in flight it holds the channel (channel.store.ts): no voucher is taken, so
 * none is accepted against funds the refund returns. The hold ends only once the chain says the
 * refund is over: its nonce moved (it landed), its transaction reverted, or its relayer nonce was
 * used by another transaction (it can never land). A refund signature never expires, so nothing
 * else may end it; its transaction is stored before it is broadcast.
 */
@Injectable()
export class RefundsService {
  private readonly logger = new Logger('Refunds');

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
    let state = await onChain(() => readChannel(this.chain, batch, channelId));
    let record = await this.currentRecord(channelId, payment, state);
    if (record.hold) {
      if (!(await this.releaseHold(channelId, record.hold, state))) throw refundInFlight();
      state = await onChain(() => readChannel(this.chain, batch, channelId));
      record = await this.currentRecord(channelId, payment, state);
    }
    const charged = chargedBase(record, state);
    if (voucher.maxClaimableAmount !== charged)
      throw correction(channelId, charged, record, state, charged, voucher.maxClaimableAmount);
    if (record.refundedCharged === charged)
      throw new PaymentRejected(
        BATCH_REASONS.refundPayload,
        'A refund was already made with the voucher for this total; pay a page before asking for another',
      );
    const remainder = state.balance - charged;
    if (remainder <= 0n)
      throw new PaymentRejected(BATCH_REASONS.refundNoBalance, 'The channel holds nothing beyond what it was charged');
    // The escrow returns at most what is not claimed; asking for more gets the remainder.
    const amount =
      payment.refundAmount !== undefined && payment.refundAmount < remainder ? payment.refundAmount : remainder;

    const hold = randomUUID();
    if (!(await this.store.holdForRefund({ channelId, id: hold, charged, nonce: state.refundNonce })))
      throw refundInFlight(); // a voucher or another refund moved the channel since it was read
    let hash: Hash;
    try {
      hash = await this.send(batch, payment, channelId, hold, { charged, amount, state });
    } catch (error) {
      if (!(error instanceof SentMaybe)) await this.store.endRefund(channelId, hold, false);
      throw error instanceof SentMaybe ? error.answer : error;
    }
    const receipt = await waitForReceipt(this.chain, hash, this.chain.settlementTimeoutMs).catch((error: unknown) => {
      if (isChainUnreachable(error)) return null;
      throw error;
    });
    // Not confirmed in time: the hold stays, and is ended by whoever next finds the chain done with it.
    if (!receipt) throw unavailable('The refund is sent and not confirmed yet; ask again shortly');
    if (receipt.status !== 'success') {
      await this.store.endRefund(channelId, hold, false);
      throw new PaymentRejected(
        BATCH_REASONS.refundTransactionFailed,
        'The refund transaction reverted; nothing moved',
      );
    }
    const after = await onChain(() => readChannel(this.chain, batch, channelId));
    await this.store.markClaimed(channelId, after.totalClaimed);
    await this.store.endRefund(channelId, hold, true);
    const refunded = refundedIn(receipt, batch, channelId);
    this.logger.log(`refunded ${refunded} of channel ${channelId} to ${config.payer} in ${hash}`);
    return {
      kind: 'refunded',
      body: {
        status: 'refunded',
        gate_id: gate.id,
        channel_id: channelId,
        payer: config.payer.toLowerCase(),
        refund_amount: refunded.toString(),
        refund_tx_hash: hash,
        network: this.chain.network.name,
        channel_state: channelState(channelId, after, charged),
      },
    };
  }

  /**
   * Ends the channel's refund hold if the chain is done with its refund; true when no hold remains.
   * Vouchers call it when they find the channel held.
   */
  async releaseIfOver(channelId: Hex): Promise<boolean> {
    const record = await this.store.refundRecord(channelId);
    if (!record?.hold) return true;
    const state = await onChain(() => readChannel(this.chain, this.chain.batchSettlement!, channelId));
    return this.releaseHold(channelId, record.hold, state);
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

  /** The claim (when anything charged is unclaimed), the settle, and the refund, in one transaction, stored before it is broadcast. */
  private async send(
    batch: BatchSettlementChain,
    payment: BatchSettlementPayment,
    channelId: Hex,
    hold: string,
    { charged, amount, state }: { charged: bigint; amount: bigint; state: OnChainChannel },
  ): Promise<Hash> {
    const { channelConfig: config, voucher } = payment;
    const calls: Hex[] = [];
    if (charged > state.totalClaimed) {
      const row = { config, maxClaimableAmount: charged, signature: voucher.signature, totalClaimed: charged };
      calls.push(await claimCalldata(this.chain, batch, [row]), settleCalldata(config.receiver, config.token));
    }
    calls.push(await refundCalldata(this.chain, batch, config, amount, state.refundNonce));
    const data = multicallCalldata(calls);
    const relayer = this.chain.relayer;
    try {
      await this.chain.publicClient.call({ account: relayer.account.address, to: batch.escrow, data });
    } catch (error) {
      if (isChainUnreachable(error)) throw chainUnavailable();
      throw new PaymentRejected(
        BATCH_REASONS.refundSimulationFailed,
        `The refund would revert: ${revertMessage(error).slice(0, 200)}`,
      );
    }
    const call = await onChain(() => prepareRelayerCall(this.chain, batch.escrow, data));
    try {
      return await this.chain.relayerNonces.send(async (nonce) => {
        const serializedTransaction = await relayer.account.signTransaction!({ ...call, nonce });
        if (!(await this.store.setRefundTx(channelId, hold, keccak256(serializedTransaction), nonce)))
          throw new HoldLost();
        return relayer.sendRawTransaction({ serializedTransaction });
      });
    } catch (error) {
      if (error instanceof HoldLost) throw refundInFlight();
      if (isChainUnreachable(error) && !broadcastMayHaveLanded(error)) throw chainUnavailable();
      // It may be in a node's pool: the hold stays until the chain says it is over.
      throw new SentMaybe(unavailable('The refund may have been sent; ask again shortly'));
    }
  }

  /** Ends `hold` when its refund is over, from the chain's word alone; true when the channel is free. */
  private async releaseHold(channelId: Hex, hold: RefundHold, state: OnChainChannel): Promise<boolean> {
    const over = await this.refundOver(hold, state);
    if (over === 'in flight') return false;
    if (over === 'landed') await this.store.markClaimed(channelId, state.totalClaimed);
    await this.store.endRefund(channelId, hold.id, over === 'landed');
    return true;
  }

  private async refundOver(hold: RefundHold, state: OnChainChannel): Promise<'landed' | 'failed' | 'in flight'> {
    if (state.refundNonce > hold.nonce) return 'landed';
    if (hold.tx === null || hold.txNonce === null)
      return Date.now() - hold.lockedAt.getTime() > UNSIGNED_HOLD_MS ? 'failed' : 'in flight';
    const client = this.chain.publicClient;
    const hash = hold.tx as Hash;
    const receipt = await onChain(() => client.getTransactionReceipt({ hash })).catch(notFoundAsNull);
    if (receipt) return receipt.status === 'success' ? 'landed' : 'failed';
    if (await onChain(() => client.getTransaction({ hash })).catch(notFoundAsNull)) return 'in flight';
    // Unknown to the node: it can still land only while its relayer nonce is unused.
    const mined = await onChain(() =>
      client.getTransactionCount({ address: this.chain.relayer.account.address, blockTag: 'latest' }),
    );
    return mined > hold.txNonce ? 'failed' : 'in flight';
  }
}

/** A broadcast whose fate is unknown: the hold must stay; `answer` is what the payer is told. */
class SentMaybe extends Error {
  constructor(readonly answer: Error) {
    super(answer.message);
  }
}

/** viem's "not found" for a receipt or transaction the node does not know: null; anything else is thrown. */
function notFoundAsNull(error: unknown): null {
  const name = (error as { name?: unknown })?.name;
  if (name === 'TransactionReceiptNotFoundError' || name === 'TransactionNotFoundError') return null;
  throw error;
}
