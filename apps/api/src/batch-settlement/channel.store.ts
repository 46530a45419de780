import type { ChannelConfig } from '@crawlgate/core';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { PaymentChannel } from '../generated/prisma/client';
import type { SiteChannelRow } from './site-channels';

export interface ChannelKey {
  channelId: string;
  chainId: number;
  escrow: string;
  config: ChannelConfig;
}

/** Rows in one claimWithSignature: well inside a block's gas (a row costs tens of thousands of gas); the rest waits for the next run. */
export const MAX_CLAIM_ROWS = 100;

/** A channel's record as a voucher is judged against it. */
export interface ChannelRecord {
  /** x402's chargedCumulativeAmount. */
  charged: bigint;
  /** The payer authorizer's signature of the voucher for exactly `charged`; null before the first one. */
  signature: string | null;
}

/** What a voucher payment is answered with: its gate, what it paid, and the token it was given. */
export interface VoucherPayment {
  gateId: string;
  siteId: string;
  url: string;
  payer: string;
  amount: bigint;
  cumulativeAmount: bigint;
  tokenKid: string;
  tokenIssuedAt: Date;
  tokenExpiresAt: Date;
}

/** A voucher payment to record: everything but the channel and the voucher's total. */
export type VoucherPaymentData = Omit<VoucherPayment, 'cumulativeAmount'> & {
  publisherId: string;
  chainId: number;
  asset: string;
  payTo: string;
  confirmedAt: Date;
};

interface VoucherRecordRow {
  charged: string | bigint | null;
  signature: string | null;
  gate_id: string | null;
  site_id: string;
  url: string;
  payer: string;
  amount: string | bigint;
  token_kid: string;
  token_issued_at: Date | string;
  token_expires_at: Date | string;
}

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

  /**
   * The channel's record and the payment the voucher for `cumulative` already made, each null when
   * there is none, in one statement: both read from one snapshot, so a copy of the voucher recorded
   * meanwhile is either in both or in neither (then record's conditional move finds it stale).
   */
  async voucherRecord(
    channelId: string,
    cumulative: bigint,
  ): Promise<{ channel: ChannelRecord | null; taken: VoucherPayment | null }> {
    const [row] = await this.db.sql.query<VoucherRecordRow>(
      `SELECT c.charged, c.signature, p.gate_id, p.site_id, p.url, p.payer, p.amount, p.token_kid, p.token_issued_at, p.token_expires_at
         FROM (SELECT 1) AS one
         LEFT JOIN payment_channels c ON c.channel_id = $1
         LEFT JOIN payments p ON p.channel_id = $1 AND p.cumulative_amount = $2::bigint`,
      [channelId, cumulative.toString()],
    );
    return {
      channel: row.charged === null ? null : { charged: BigInt(row.charged), signature: row.signature },
      taken:
        row.gate_id === null
          ? null
          : {
              gateId: row.gate_id,
              siteId: row.site_id,
              url: row.url,
              payer: row.payer.trim(),
              amount: BigInt(row.amount),
              cumulativeAmount: cumulative,
              tokenKid: row.token_kid,
              tokenIssuedAt: new Date(row.token_issued_at),
              tokenExpiresAt: new Date(row.token_expires_at),
            },
    };
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
   * the statement, channel move included, is undone.
   */
  async recordVoucher(args: {
    channelId: string;
    expected: bigint;
    cumulative: bigint;
    signature: string;
    payment: VoucherPaymentData;
  }): Promise<'recorded' | 'stale'> {
    const p = args.payment;
    // One statement, so one transaction: the insert's unique violation undoes the move.
    const rows = await this.db.sql.query(
      `WITH moved AS (
         UPDATE payment_channels
            SET charged = $3::bigint, signature = $4, unclaimed_since = COALESCE(unclaimed_since, now()), updated_at = now()
          WHERE channel_id = $1 AND charged = $2::bigint
         RETURNING channel_id)
       INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount,
                             token_kid, token_issued_at, token_expires_at, confirmed_at, channel_id, cumulative_amount)
       SELECT $5::uuid, $6::uuid, $7::uuid, $8::uuid, $9, 'voucher', 'confirmed', $10::int, $11, $12, $13, $14::bigint,
              $15, $16::timestamptz, $17::timestamptz, $18::timestamptz, channel_id, $3::bigint
         FROM moved
       RETURNING id`,
      [
        args.channelId,
        args.expected.toString(),
        args.cumulative.toString(),
        args.signature,
        randomUUID(),
        p.gateId,
        p.siteId,
        p.publisherId,
        p.url,
        p.chainId,
        p.asset,
        p.payer,
        p.payTo,
        p.amount.toString(),
        p.tokenKid,
        p.tokenIssuedAt.toISOString(),
        p.tokenExpiresAt.toISOString(),
        p.confirmedAt.toISOString(),
      ],
    );
    return rows.length === 1 ? 'recorded' : 'stale';
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
