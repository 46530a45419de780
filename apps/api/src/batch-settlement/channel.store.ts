import type { ChannelConfig } from '@crawlgate/core';
import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { Payment, PaymentChannel, Prisma } from '../generated/prisma/client';
import type { SiteChannelRow } from './site-channels';

export interface ChannelKey {
  channelId: string;
  chainId: number;
  escrow: string;
  config: ChannelConfig;
}

/** Rows in one claimWithSignature: well inside a block's gas (a row costs tens of thousands of gas); the rest waits for the next run. */
export const MAX_CLAIM_ROWS = 100;

export type VoucherPaymentData = Omit<
  Prisma.PaymentUncheckedCreateInput,
  'method' | 'status' | 'channelId' | 'cumulativeAmount'
>;

/**
 * The SQL of batch-settlement channels: one row per channel with the highest voucher accepted, moved
 * only by a conditional UPDATE from the total a request read to the next (so two requests that
 * read the same total cannot both charge it), in the same transaction as the payment it pays.
 */
@Injectable()
export class ChannelStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * A site's voucher payments per channel, split by what the channel's claims reached: a voucher for
   * cumulative total T is claimed once the channel's claimed total (as last read from the chain) is
   * at least T. Vouchers of one channel may pay several sites; each counts only for its own.
   */
  siteChannels(siteId: string): Promise<SiteChannelRow[]> {
    return this.db.sql.query<SiteChannelRow>(
      `SELECT c.channel_id, c.payer,
              COALESCE(SUM(p.amount) FILTER (WHERE p.cumulative_amount <= c.claimed), 0)::text AS claimed,
              COALESCE(SUM(p.amount) FILTER (WHERE p.cumulative_amount > c.claimed), 0)::text AS unclaimed,
              MAX(p.confirmed_at) AS last_voucher_at
         FROM payments p JOIN payment_channels c ON c.channel_id = p.channel_id
        WHERE p.site_id = $1::uuid AND p.method = 'voucher' AND p.status = 'confirmed'
        GROUP BY c.channel_id, c.payer
        ORDER BY last_voucher_at DESC, c.channel_id`,
      [siteId],
    );
  }

  find(channelId: string): Promise<PaymentChannel | null> {
    return this.db.prisma.paymentChannel.findUnique({ where: { channelId } });
  }

  /** The payment a voucher (channel, cumulative total) already made, if any. */
  paymentOfVoucher(channelId: string, cumulativeAmount: bigint): Promise<Payment | null> {
    return this.db.prisma.payment.findUnique({
      where: { channelId_cumulativeAmount: { channelId, cumulativeAmount } },
    });
  }

  /**
   * Makes sure the channel has a row charged at least `totalClaimed` (the chain's claimed total: a
   * channel first seen here, or one whose stored state is behind the chain, starts from it, as
   * x402 says a server without state must). A raised row forgets its voucher, which no longer
   * matches its total.
   */
  async open(key: ChannelKey, totalClaimed: bigint): Promise<void> {
    const c = key.config;
    await this.db.prisma.$executeRaw`
      INSERT INTO payment_channels (channel_id, chain_id, escrow, payer, payer_authorizer, receiver, receiver_authorizer, token, withdraw_delay, salt, charged, claimed)
      VALUES (${key.channelId}, ${key.chainId}, ${key.escrow.toLowerCase()}, ${c.payer.toLowerCase()}, ${c.payerAuthorizer.toLowerCase()}, ${c.receiver.toLowerCase()},
              ${c.receiverAuthorizer.toLowerCase()}, ${c.token.toLowerCase()}, ${c.withdrawDelay}, ${c.salt.toLowerCase()}, ${totalClaimed}, ${totalClaimed})
      ON CONFLICT (channel_id) DO UPDATE SET charged = EXCLUDED.charged, claimed = EXCLUDED.claimed, signature = NULL, updated_at = now()
      WHERE payment_channels.charged < EXCLUDED.charged`;
  }

  /**
   * Records a voucher for `cumulative` and the payment it makes, atomically: the channel moves from
   * `expected` to `cumulative` only while it is still at `expected`; otherwise nothing is written
   * and the answer is 'stale'. A gate already paid makes the payment insert fail (unique gate), and
   * the transaction, channel move included, rolls back.
   */
  async recordVoucher(args: {
    channelId: string;
    expected: bigint;
    cumulative: bigint;
    signature: string;
    payment: VoucherPaymentData;
  }): Promise<{ kind: 'recorded'; payment: Payment } | { kind: 'stale' }> {
    return this.db.prisma.$transaction(async (tx) => {
      const moved = await tx.$executeRaw`
        UPDATE payment_channels
           SET charged = ${args.cumulative}, signature = ${args.signature}, unclaimed_since = COALESCE(unclaimed_since, now()), updated_at = now()
         WHERE channel_id = ${args.channelId} AND charged = ${args.expected}`;
      if (moved !== 1) return { kind: 'stale' as const };
      const payment = await tx.payment.create({
        data: {
          ...args.payment,
          method: 'voucher',
          status: 'confirmed',
          channelId: args.channelId,
          cumulativeAmount: args.cumulative,
        },
      });
      return { kind: 'recorded' as const, payment };
    });
  }

  /** Channels of a receiver and token with vouchers not yet claimed, oldest first, at most `limit` (one claim transaction's worth). */
  unclaimed(receiver: string, token: string, limit = MAX_CLAIM_ROWS): Promise<PaymentChannel[]> {
    return this.db.prisma.paymentChannel.findMany({
      where: { receiver, token, unclaimedSince: { not: null } },
      orderBy: [{ unclaimedSince: 'asc' }, { channelId: 'asc' }],
      take: limit,
    });
  }

  /** Receivers (and tokens) with anything unclaimed. */
  async receiversWithUnclaimed(): Promise<{ receiver: string; token: string }[]> {
    return this.db.prisma.paymentChannel.findMany({
      where: { unclaimedSince: { not: null } },
      distinct: ['receiver', 'token'],
      select: { receiver: true, token: true },
    });
  }

  /**
   * Follows the chain's totalClaimed: `claimed` never goes down, and the channel counts as fully
   * claimed only while nothing above it was charged (a voucher accepted meanwhile keeps it open).
   */
  async markClaimed(channelId: string, totalClaimed: bigint): Promise<void> {
    await this.db.prisma.$executeRaw`
      UPDATE payment_channels
         SET claimed = GREATEST(claimed, ${totalClaimed}),
             unclaimed_since = CASE WHEN charged <= ${totalClaimed} THEN NULL ELSE unclaimed_since END,
             updated_at = now()
       WHERE channel_id = ${channelId}`;
  }

  async recordClaim(claim: {
    chainId: number;
    receiver: string;
    token: string;
    txHash: string;
    channels: number;
    amount: bigint;
    settleTxHash: string | null;
  }): Promise<void> {
    await this.db.prisma.channelClaim.upsert({
      where: { chainId_txHash: { chainId: claim.chainId, txHash: claim.txHash } },
      create: claim,
      update: { settleTxHash: claim.settleTxHash },
    });
  }
}
