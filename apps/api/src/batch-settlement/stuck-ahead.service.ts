import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Hash } from 'viem';
import type { ChainContext } from '../chain/chain-context';
import { logRepricing, ReplacementNotRecorded, repriceIfStuck } from '../chain/fee-bump';
import { notFoundAsNull } from '../chain/transaction-state';
import { CHAIN } from '../chain/tokens';
import { ownHashes } from '../payments/payment-hashes';
import { PaymentStore } from '../payments/payment.store';
import { ChannelStore } from './channel.store';

/** A relayer transaction of ours pending at a nonce, and how its owner records a replacement. */
interface PendingOfOurs {
  what: string;
  hash: Hash;
  sentAt: Date;
  record: (hash: Hash, nonce: number) => Promise<void>;
}

/**
 * The relayer's transactions pending ahead of an urgent claim, whatever their kind or receiver (an
 * `exact` settlement, a refund, a deposit, another receiver's claim or settle): the claim is mined only after
 * every lower nonce, so one of them stuck at RELAYER_MAX_FEE_PER_GAS_WEI would hold it past its
 * payer's withdrawal deadline however high its own fees. Only the claimer lifts them, and only for
 * an urgent claim; each owner's own re-pricing keeps the normal maximum.
 */
@Injectable()
export class StuckAheadService {
  private readonly logger = new Logger('StuckAhead');

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly channels: ChannelStore,
    private readonly payments: PaymentStore,
  ) {}

  /**
   * Re-prices (repriceIfStuck), up to RELAYER_URGENT_MAX_FEE_PER_GAS_WEI, every relayer transaction
   * pending at a nonce below `before` (an urgent claim's; by default the nonce the next one takes),
   * its replacement recorded as its owner's before it is sent (a relayer deposit's too). One the API
   * has no record of (another process's, a deposit sent before deposits were recorded) is left as it
   * is, with a warning. Never throws: the urgent claim goes all the same.
   */
  async liftAhead(before?: number): Promise<void> {
    try {
      const { mined, next } = await this.relayerNonces();
      const end = before ?? next;
      if (mined >= end) return;
      const pending = await this.pendingOfOurs();
      for (let nonce = mined; nonce < end; nonce++) await this.lift(nonce, pending.get(nonce));
    } catch (error) {
      this.logger.warn(`what is pending ahead of an urgent claim was not re-priced: ${(error as Error).message}`);
    }
  }

  private async lift(nonce: number, ahead: PendingOfOurs | undefined): Promise<void> {
    if (!ahead) {
      this.logger.warn(
        `the relayer transaction at nonce ${nonce}, ahead of an urgent claim, is none the API recorded: it is not re-priced`,
      );
      return;
    }
    const repricing = await repriceIfStuck(this.chain, ahead.hash, ahead.sentAt, ahead.record, 'urgent').catch(
      (error: Error) => {
        this.logger.warn(`${ahead.what} ${ahead.hash} ahead of an urgent claim was not re-priced: ${error.message}`);
        return null;
      },
    );
    if (repricing) logRepricing(this.logger, `${ahead.what} ahead of an urgent claim`, ahead.hash, repricing);
  }

  /** The relayer's mined transaction count (its lowest pending nonce) and its pending one (the next nonce). */
  private async relayerNonces(): Promise<{ mined: number; next: number }> {
    const address = this.chain.relayer.account.address;
    const [mined, next] = await Promise.all([
      this.chain.publicClient.getTransactionCount({ address, blockTag: 'latest' }),
      this.chain.publicClient.getTransactionCount({ address, blockTag: 'pending' }),
    ]);
    return { mined, next };
  }

  /** Our recorded transactions the node holds pending (by any hash sent for them), by nonce. */
  private async pendingOfOurs(): Promise<Map<number, PendingOfOurs>> {
    const pending = new Map<number, PendingOfOurs>();
    for (const one of [...(await this.channelTransactions()), ...(await this.settlements())]) {
      const tx = await this.chain.publicClient.getTransaction({ hash: one.hash }).catch(notFoundAsNull);
      if (tx && tx.blockNumber === null) pending.set(tx.nonce, one);
    }
    return pending;
  }

  private async channelTransactions(): Promise<PendingOfOurs[]> {
    const chainId = this.chain.chainId;
    return (await this.channels.relayerTransactionsOnTheirWay(chainId)).map((one) => ({
      what: `the ${one.kind}`,
      hash: one.txHash as Hash,
      sentAt: one.sentAt,
      record: async (hash, nonce) => {
        if (one.kind === 'claim') return this.channels.recordClaimReplacement(chainId, one.txHash, hash);
        if (one.kind === 'settle') return this.channels.recordSettleReplacement(chainId, one.txHash, hash);
        if (one.kind === 'deposit') return this.channels.recordDepositReplacement(chainId, one.txHash, hash);
        const { channelId, id, current } = one.refund!;
        if (!(await this.channels.recordRefundReplacement(channelId, id, current, hash, nonce)))
          throw new ReplacementNotRecorded();
      },
    }));
  }

  /** Each hash sent for a settlement in flight: the current one's broadcast may have failed while an earlier one waits. */
  private async settlements(): Promise<PendingOfOurs[]> {
    return (await this.payments.settlementsInFlight(this.chain.chainId)).flatMap((payment) =>
      ownHashes(payment).map((sent) => ({
        what: `the settlement of payment ${payment.id}`,
        hash: sent,
        sentAt: payment.txSentAt ?? payment.createdAt,
        // Recorded over the hash the payment has now, whichever of its hashes is replaced.
        record: async (hash: Hash) => {
          if (!(await this.payments.recordReplacement(payment.id, payment.txHash!, hash)))
            throw new ReplacementNotRecorded();
        },
      })),
    );
  }
}
