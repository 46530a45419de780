import type { ChannelConfig } from '@crawlgate/core';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Hash } from 'viem';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { PaymentChannel } from '../generated/prisma/client';
import { hashesSent } from '../payments/payment-hashes';
import { inPayerTurn, LEASE_COUNTED_SECONDS, type MoneyInFlight, type PayerKey } from '../payments/payment.store';
import type { SitePaymentTerms } from '../sites/site-payment-terms.store';
import type { HarmlessWithdrawal } from './harmless-withdrawals';
import type { SiteChannelRow } from './site-channels';

export interface ChannelKey {
  channelId: string;
  chainId: number;
  escrow: string;
  config: ChannelConfig;
}

/** How long a claim with no settle recorded is followed up (see receiversWithUnsettledClaims). */
const UNSETTLED_CLAIM_WINDOW_MS = 7 * 24 * 3600_000;

/** Whose claims: one receiver's, in one token, on one chain. */
export interface ReceiverClaims {
  chainId: number;
  receiver: string;
  token: string;
}

/** A channel with vouchers not yet claimed, as the claimer's search of withdrawals needs it (unclaimedChannels). */
export interface UnclaimedChannel {
  channelId: string;
  charged: bigint;
  /** A verdict that its pending withdrawal takes nothing charged; null when none stands. */
  harmless: HarmlessWithdrawal | null;
}

/** A receiver's (in one token) channels of one withdraw delay with vouchers not yet claimed, summed up (unclaimedByReceiver). */
export interface UnclaimedOfReceiver {
  receiver: string;
  token: string;
  withdrawDelay: number;
  /** The oldest voucher not yet claimed. */
  since: Date;
  /** What was charged above what is recorded claimed, on channels not pushed behind the queue. */
  owed: bigint;
  /** A channel's vouchers went into calldata above what is recorded claimed (channels not pushed behind the queue). */
  published: boolean;
  /** A channel's payer is withdrawing, as the claimer last saw it. */
  withdrawing: boolean;
}

/** A claimWithSignature transaction of ours, as channel_claims records it once signed. */
export interface ClaimRecord extends ReceiverClaims {
  txHash: string;
  /** The relayer nonce it was signed with. */
  nonce: number;
  /** How many channels it claimed, and what it added to their totalClaimed (atomic units). */
  channels: number;
  amount: bigint;
}

/** A claim or settle written down before its broadcast and not yet seen landed: mined, lost or never sent. */
export interface SentTransaction {
  txHash: string;
  nonce: number | null;
  /** When it was written down, just before its broadcast: one pending too long is re-priced. */
  createdAt: Date;
}

/** A deposit the relayer sent for `payer` (channel_deposits), spending its authorization `authorizationNonce`. */
export interface SentDeposit extends SentTransaction {
  channelId: string;
  payer: string;
  authorizationNonce: string;
  amount: bigint | null;
  validBefore: Date | null;
}

/** A claim, settle, refund or deposit transaction of ours written down and not seen landed (relayerTransactionsOnTheirWay). */
export interface OnItsWay {
  kind: 'claim' | 'settle' | 'refund' | 'deposit';
  txHash: string;
  nonce: number;
  sentAt: Date;
  /**
   * A refund's hold, and the hash it has now (`current`): txHash may be an earlier one, still pending
   * when the broadcast of `current` failed. Its replacement is recorded only while the hold still has `current`.
   */
  refund?: { channelId: string; id: string; current: string };
}

/** A deposit the relayer sends for a payer, as channel_deposits records it once signed. */
export interface DepositRecord {
  chainId: number;
  channelId: string;
  payer: string;
  /** The payer's ERC-3009 authorization nonce the deposit spends. */
  authorizationNonce: string;
  txHash: string;
  /** The relayer nonce it was signed with. */
  nonce: number;
  /** The deposit's amount (atomic units) and its authorization's end: counted as the payer's money in flight until it lands. */
  amount: bigint;
  validBefore: Date;
}

/** A deposit's lease no longer counts it (stalled past LEASE_WRITTEN_WITHIN_SECONDS, or taken by another deposit): nothing was written. */
export class DepositLeaseLost extends Error {
  constructor() {
    super('the deposit’s lease no longer counts it');
  }
}

/** The same deposit is written down at another relayer nonce and not seen landed: nothing was written. */
export class DepositOnItsWay extends Error {
  constructor() {
    super('the deposit is on its way at another relayer nonce');
  }
}

/**
 * How old a lease may be when its deposit is written down: less than the LEASE_COUNTED_SECONDS
 * readers count it, by more than any statement's wait between the two (each reads its own now()).
 */
const LEASE_WRITTEN_WITHIN_SECONDS = LEASE_COUNTED_SECONDS - 60;

/** A settle transaction of ours, as channel_settles records it once signed. */
export interface SettleRecord extends ReceiverClaims {
  txHash: string;
  /** The relayer nonce it was signed with. */
  nonce: number;
  /** The landed claims it sends on (unsettledClaimIds when it was signed). */
  claimIds: string[];
}

/**
 * Whose claims a claimer signs: those of one escrow on one chain, whose channels name its key as
 * receiver authorizer (the escrow reverts a whole claim batch over any other channel).
 */
export interface ClaimSigner {
  chainId: number;
  escrow: string;
  receiverAuthorizer: string;
}

function signedBy(signer: ClaimSigner) {
  return {
    chainId: signer.chainId,
    escrow: signer.escrow.toLowerCase(),
    receiverAuthorizer: signer.receiverAuthorizer.toLowerCase(),
  };
}

/** A channel's record as a voucher is judged against it. */
export interface ChannelRecord {
  /** x402's chargedCumulativeAmount. */
  charged: bigint;
  /** The payer authorizer's signature of the voucher for exactly `charged`; null before the first one. */
  signature: string | null;
  /** A cooperative refund holds the channel: no voucher is taken until it ends. */
  refundHeld: boolean;
  /** The chain's refundNonce once the last refund landed: a voucher must be judged against chain state at least that new. */
  refundsThrough: bigint;
  /** The highest voucher total a claim transaction of ours carried (public calldata). */
  published: bigint;
}

/** A channel a refund holds, and since when: where a sweep through the holds stands. */
export interface HeldChannel {
  channelId: string;
  lockedAt: Date;
}

/** A cooperative refund in flight on a channel (refunds.service.ts). */
export interface RefundHold {
  id: string;
  /** The chain's refundNonce its signature is for: once the chain's is past it, it landed. */
  nonce: bigint;
  /** What it asks back; null for a hold taken before this was stored. */
  amount: bigint | null;
  /** Its transaction and relayer nonce, stored before the broadcast; null until signed. */
  tx: string | null;
  txNonce: number | null;
  /** Earlier hashes of `tx`, each replaced at its nonce by a re-priced one: any of them may be mined. */
  replacedTxs: string[];
  /** When `tx` was signed to be broadcast: one pending too long is re-priced. */
  txSentAt: Date | null;
}

/** Every hash broadcast for the hold's refund, the current one first: whichever is mined is the refund. */
export function refundHashes(hold: Pick<RefundHold, 'tx' | 'replacedTxs'>): Hash[] {
  return hashesSent(hold.tx, hold.replacedTxs);
}

/** A channel as a refund request is judged against it. */
export interface RefundRecord {
  charged: bigint;
  /** The payer authorizer's signature of the voucher for exactly `charged`; null before the first one. */
  signature: string | null;
  /** The voucher total the last refund used up; null before any. */
  refundedCharged: bigint | null;
  /** The highest voucher total a claim transaction of ours carried (public calldata). */
  published: bigint;
  hold: RefundHold | null;
}

/** What a voucher payment is answered with: its gate, what it paid, and the token it was given. */
export interface VoucherPayment {
  gateId: string;
  /** Of the signed gate id it paid through (isPaymentOfGate). */
  gateIdSha256: string | null;
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
export type VoucherPaymentData = Omit<VoucherPayment, 'cumulativeAmount' | 'gateIdSha256'> & {
  gateIdSha256: string;
  publisherId: string;
  chainId: number;
  asset: string;
  payTo: string;
  confirmedAt: Date;
};

interface VoucherRecordRow {
  charged: string | bigint | null;
  signature: string | null;
  refund_id: string | null;
  refunds_through: string | bigint | null;
  published: string | bigint | null;
  gate_id: string | null;
  gate_id_sha256: string | null;
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
      `SELECT c.charged, c.signature, c.refund_id, c.refunds_through, c.published, p.gate_id, p.gate_id_sha256, p.site_id, p.url, p.payer, p.amount, p.token_kid, p.token_issued_at, p.token_expires_at
         FROM (SELECT 1) AS one
         LEFT JOIN payment_channels c ON c.channel_id = $1
         LEFT JOIN payments p ON p.channel_id = $1 AND p.cumulative_amount = $2::bigint`,
      [channelId, cumulative.toString()],
    );
    return {
      channel:
        row.charged === null
          ? null
          : {
              charged: BigInt(row.charged),
              signature: row.signature,
              refundHeld: row.refund_id !== null,
              refundsThrough: BigInt(row.refunds_through ?? 0),
              published: BigInt(row.published ?? 0),
            },
      taken:
        row.gate_id === null
          ? null
          : {
              gateId: row.gate_id,
              gateIdSha256: row.gate_id_sha256,
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
   * `expected` to `cumulative` only while it is still at `expected`, no refund holds it, and the
   * chain state it was judged against (`refundNonce`) is past every refund that landed; otherwise
   * nothing is written and the answer is 'stale'. The site's terms the voucher was last judged by
   * (`terms`: vouchers on, its prices' version, its publisher's payout address, and the version of
   * the secrets the payment's token was signed with: a rotation since may have revoked that secret)
   * must be the site's still, read under a share lock, else nothing is written and the answer is 'terms-changed': a
   * publisher's change waits for this statement, so a resend that reads the change finds this
   * voucher taken, and one recorded never contradicts what a resend was told. A gate already paid
   * makes the payment insert fail (unique gate), and the statement, channel move included, is undone.
   */
  async recordVoucher(args: {
    channelId: string;
    expected: bigint;
    cumulative: bigint;
    signature: string;
    /** The chain's refundNonce in the state the voucher was judged against. */
    refundNonce: bigint;
    /** The site's terms the voucher was judged by, and the secrets' version its token was signed under. */
    terms: Pick<SitePaymentTerms, 'pricingVersion' | 'payoutAddress' | 'secretsVersion'>;
    payment: VoucherPaymentData;
  }): Promise<'recorded' | 'stale' | 'terms-changed'> {
    const p = args.payment;
    // One statement, so one transaction: the insert's unique violation undoes the move.
    const [row] = await this.db.sql.query<{ terms_stand: boolean; recorded: boolean }>(
      `WITH terms AS (
         SELECT s.id FROM sites s JOIN publishers p ON p.id = s.publisher_id
          WHERE s.id = $7::uuid AND s.batch_settlement AND s.pricing_version = $21::int
            AND s.secrets_version = $23::int AND p.payout_address::text IS NOT DISTINCT FROM $22::text
            FOR SHARE OF s, p),
       moved AS (
         UPDATE payment_channels
            SET charged = $3::bigint, signature = $4, unclaimed_since = LEAST(unclaimed_since, now()), updated_at = now()
          WHERE channel_id = $1 AND charged = $2::bigint AND refund_id IS NULL AND refunds_through <= $19::bigint
            AND EXISTS (SELECT 1 FROM terms)
         RETURNING channel_id),
       recorded AS (
         INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount,
                               token_kid, token_issued_at, token_expires_at, confirmed_at, channel_id, cumulative_amount, gate_id_sha256)
         SELECT $5::uuid, $6::uuid, $7::uuid, $8::uuid, $9, 'voucher', 'confirmed', $10::int, $11, $12, $13, $14::bigint,
                $15, $16::timestamptz, $17::timestamptz, $18::timestamptz, channel_id, $3::bigint, $20
           FROM moved
         RETURNING id)
       SELECT EXISTS (SELECT 1 FROM terms) AS terms_stand, EXISTS (SELECT 1 FROM recorded) AS recorded`,
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
        args.refundNonce.toString(),
        p.gateIdSha256,
        args.terms.pricingVersion,
        args.terms.payoutAddress,
        args.terms.secretsVersion,
      ],
    );
    if (!row.terms_stand) return 'terms-changed';
    return row.recorded ? 'recorded' : 'stale';
  }

  /** The channel as a refund is judged against it; null when it has no row. */
  async refundRecord(channelId: string): Promise<RefundRecord | null> {
    const [row] = await this.db.sql.query<{
      charged: string | bigint;
      signature: string | null;
      refunded_charged: string | bigint | null;
      published: string | bigint;
      refund_id: string | null;
      refund_nonce: string | bigint | null;
      refund_amount: string | bigint | null;
      refund_tx: string | null;
      refund_tx_nonce: number | null;
      refund_replaced_txs: string[] | null;
      refund_tx_sent_at: Date | string | null;
    }>(
      `SELECT charged, signature, refunded_charged, published, refund_id, refund_nonce, refund_amount, refund_tx,
              refund_tx_nonce, refund_replaced_txs, refund_tx_sent_at
         FROM payment_channels WHERE channel_id = $1`,
      [channelId],
    );
    if (!row) return null;
    return {
      charged: BigInt(row.charged),
      signature: row.signature,
      refundedCharged: row.refunded_charged === null ? null : BigInt(row.refunded_charged),
      published: BigInt(row.published),
      hold:
        row.refund_id === null
          ? null
          : {
              id: row.refund_id,
              nonce: BigInt(row.refund_nonce!),
              amount: row.refund_amount === null ? null : BigInt(row.refund_amount),
              tx: row.refund_tx?.trim() ?? null,
              txNonce: row.refund_tx_nonce,
              replacedTxs: row.refund_replaced_txs ?? [],
              txSentAt: row.refund_tx_sent_at === null ? null : new Date(row.refund_tx_sent_at),
            },
    };
  }

  /**
   * Holds the channel for refund `id` of `amount` while it is charged exactly `charged`, no refund
   * holds it and no refund used up that total yet; false otherwise. From here no voucher is recorded on it.
   */
  async holdForRefund(args: {
    channelId: string;
    id: string;
    charged: bigint;
    nonce: bigint;
    amount: bigint;
  }): Promise<boolean> {
    const rows = await this.db.sql.query(
      `UPDATE payment_channels
          SET refund_id = $2::uuid, refund_nonce = $4::bigint, refund_amount = $5::bigint, refund_locked_at = now(),
              refund_tx = NULL, refund_tx_nonce = NULL, refund_replaced_txs = '{}', refund_tx_sent_at = NULL,
              updated_at = now()
        WHERE channel_id = $1 AND refund_id IS NULL AND charged = $3::bigint
          AND refunded_charged IS DISTINCT FROM $3::bigint
       RETURNING channel_id`,
      [args.channelId, args.id, args.charged.toString(), args.nonce.toString(), args.amount.toString()],
    );
    return rows.length === 1;
  }

  /**
   * Stores refund `id`'s signed transaction before it is broadcast; false when the hold is no longer
   * its own, or its transaction is no longer `follows` (null for a hold never signed): then it must
   * not be sent. A refund sent again follows one judged failed: the hashes that replaced that one at
   * its nonce are as dead as it, but a replacement the sweep stored since (its nonce's use, read
   * before it was stored, made the one judged look failed) may land, and only one request may send again.
   */
  async setRefundTx(
    channelId: string,
    id: string,
    follows: string | null,
    tx: string,
    txNonce: number,
  ): Promise<boolean> {
    const rows = await this.db.sql.query(
      `UPDATE payment_channels
          SET refund_tx = $4, refund_tx_nonce = $5::int, refund_replaced_txs = '{}', refund_tx_sent_at = now(),
              updated_at = now()
        WHERE channel_id = $1 AND refund_id = $2::uuid AND refund_tx IS NOT DISTINCT FROM $3
       RETURNING channel_id`,
      [channelId, id, follows, tx, txNonce],
    );
    return rows.length === 1;
  }

  /**
   * Refund `id`'s transaction `replaced` (as last read), re-priced at its nonce (fee-bump.ts), about
   * to be broadcast as `txHash`: stored as the hold's current one before it is sent, `replaced` kept,
   * as either may be mined. Only while the hold is still `id`'s, with `replaced` current at `txNonce`:
   * false otherwise (another sweep re-priced it, or it ended), and it must not be sent. The same
   * replacement again (signing is deterministic; its broadcast refused before) is stored once.
   */
  async recordRefundReplacement(
    channelId: string,
    id: string,
    replaced: string,
    txHash: string,
    txNonce: number,
  ): Promise<boolean> {
    const rows = await this.db.sql.query(
      `UPDATE payment_channels
          SET refund_replaced_txs = CASE
                WHEN refund_tx = $4 OR refund_tx::text = ANY(COALESCE(refund_replaced_txs, '{}')) THEN refund_replaced_txs
                ELSE array_append(COALESCE(refund_replaced_txs, '{}'), refund_tx::text) END,
              refund_tx = $4, refund_tx_sent_at = now(), updated_at = now()
        WHERE channel_id = $1 AND refund_id = $2::uuid AND refund_tx = $3 AND refund_tx_nonce = $5::int
       RETURNING channel_id`,
      [channelId, id, replaced, txHash, txNonce],
    );
    return rows.length === 1;
  }

  /**
   * Ends refund `id`'s hold (only its own). `landed` when the chain shows it executed: that uses up
   * the voucher total it was asked with, and from then on a voucher is taken only if judged against
   * chain state that includes it. Otherwise vouchers simply resume.
   */
  async endRefund(channelId: string, id: string, landed: boolean): Promise<void> {
    await this.db.sql.query(
      `UPDATE payment_channels
          SET refunded_charged = CASE WHEN $3::boolean THEN charged ELSE refunded_charged END,
              refunds_through = CASE WHEN $3::boolean THEN GREATEST(refunds_through, refund_nonce + 1) ELSE refunds_through END,
              refund_id = NULL, refund_nonce = NULL, refund_locked_at = NULL, updated_at = now()
        WHERE channel_id = $1 AND refund_id = $2::uuid`,
      [channelId, id, landed],
    );
  }

  /**
   * Ends refund `id`'s hold only while nothing was ever signed for it (no transaction stored) and it
   * is older than `staleSeconds` by the database's clock: its holder died or hung. Checked in the
   * same statement as the end, so a holder storing its transaction meanwhile keeps it. True when ended.
   */
  async endUnsignedHold(channelId: string, id: string, staleSeconds: number): Promise<boolean> {
    const rows = await this.db.sql.query(
      `UPDATE payment_channels
          SET refund_id = NULL, refund_nonce = NULL, refund_locked_at = NULL, updated_at = now()
        WHERE channel_id = $1 AND refund_id = $2::uuid AND refund_tx IS NULL
          AND refund_locked_at < now() - make_interval(secs => $3::int)
       RETURNING channel_id`,
      [channelId, id, staleSeconds],
    );
    return rows.length === 1;
  }

  /**
   * Takes the payer's deposit lease for `lease.id` (the deposit of authorization `lease.nonce`, of
   * `lease.amount`, valid until `lease.validBefore`) when no other deposit of the payer holds it, or
   * the one that does is older than `staleSeconds` by the database's clock (its process died, or gave
   * up waiting for it). Taken in the payer's turn (inPayerTurn), as its exact claims are written:
   * the claims in flight written before it are returned to be counted against the payer's balance,
   * and every claim written after it counts the deposit. Null when another deposit holds the lease.
   */
  async takeDepositLease(
    lease: PayerKey & { id: string; nonce: string; amount: bigint; validBefore: Date },
    staleSeconds: number,
  ): Promise<MoneyInFlight[] | null> {
    const payer = lease.payer.toLowerCase();
    return this.db.sql.transaction(async (tx) => {
      const inFlight = await inPayerTurn(tx, { chainId: lease.chainId, asset: lease.asset, payer });
      const rows = await tx.query(
        `INSERT INTO deposit_leases (payer, lease_id, nonce, amount, valid_before) VALUES ($1, $2::uuid, $3, $5::bigint, $6::timestamptz)
         ON CONFLICT (payer) DO UPDATE SET lease_id = EXCLUDED.lease_id, nonce = EXCLUDED.nonce, taken_at = now(),
                                           amount = EXCLUDED.amount, valid_before = EXCLUDED.valid_before
          WHERE deposit_leases.taken_at < now() - make_interval(secs => $4::int)
         RETURNING lease_id`,
        [payer, lease.id, lease.nonce.toLowerCase(), staleSeconds, lease.amount.toString(), lease.validBefore],
      );
      // A stale lease taken over was read before, as were the hashes sent for its deposit (those stay
      // counted after, channel_deposits): a deposit that may still land counts until its authorization
      // reads as used. This deposit's own (a resend's) payerCoverage leaves out, by its nonce.
      return rows.length === 0 ? null : inFlight;
    });
  }

  /** Gives the lease back, if `id` still holds it. */
  async endDepositLease(payer: string, id: string): Promise<void> {
    await this.db.sql.query('DELETE FROM deposit_leases WHERE payer = $1 AND lease_id = $2::uuid', [
      payer.toLowerCase(),
      id,
    ]);
  }

  /** Gives the lease back if the deposit of authorization `nonce` holds it: it landed. */
  async endDepositLeaseOf(payer: string, nonce: string): Promise<void> {
    await this.db.sql.query('DELETE FROM deposit_leases WHERE payer = $1 AND nonce = $2', [
      payer.toLowerCase(),
      nonce.toLowerCase(),
    ]);
  }

  /** Channels a refund holds, the longest held first, at most `limit`; after `after` (the last of a page before) when given. */
  async heldForRefund(limit: number, after?: HeldChannel): Promise<HeldChannel[]> {
    const rows = await this.db.sql.query<{ channel_id: string; refund_locked_at: Date | string }>(
      `SELECT channel_id, refund_locked_at FROM payment_channels
        WHERE refund_id IS NOT NULL AND ($2::timestamptz IS NULL OR (refund_locked_at, channel_id) > ($2::timestamptz, $3))
        ORDER BY refund_locked_at, channel_id LIMIT $1::int`,
      [limit, after?.lockedAt.toISOString() ?? null, after?.channelId ?? ''],
    );
    return rows.map((row) => ({ channelId: row.channel_id, lockedAt: new Date(row.refund_locked_at) }));
  }

  /** Channels of a receiver and token with vouchers not yet claimed, oldest first, at most `limit` (one claim transaction's worth). */
  unclaimed(signer: ClaimSigner, receiver: string, token: string, limit: number): Promise<PaymentChannel[]> {
    return this.db.prisma.paymentChannel.findMany({
      where: { ...signedBy(signer), receiver, token, unclaimedSince: { not: null } },
      orderBy: [{ unclaimedSince: 'asc' }, { channelId: 'asc' }],
      take: limit,
    });
  }

  /** Those of `channelIds` that are channels of this receiver and token with vouchers not yet claimed. */
  unclaimedAmong(
    signer: ClaimSigner,
    receiver: string,
    token: string,
    channelIds: readonly string[],
  ): Promise<PaymentChannel[]> {
    return this.db.prisma.paymentChannel.findMany({
      where: {
        ...signedBy(signer),
        receiver,
        token,
        unclaimedSince: { not: null },
        // Or seen withdrawing before (markWithdrawalsSeen, markClaimed), whatever the log window says now.
        OR: [{ channelId: { in: [...channelIds] } }, { withdrawalSeen: true }],
      },
      orderBy: [{ unclaimedSince: 'asc' }, { channelId: 'asc' }],
    });
  }

  /** This signer's channels with vouchers not yet claimed: each id, what it was charged, and any harmless withdrawal's verdict. */
  async unclaimedChannels(signer: ClaimSigner): Promise<UnclaimedChannel[]> {
    const rows = await this.db.prisma.paymentChannel.findMany({
      where: { ...signedBy(signer), unclaimedSince: { not: null } },
      select: { channelId: true, charged: true, harmlessWithdrawalBlock: true, harmlessWithdrawalCovers: true },
    });
    return rows.map(({ channelId, charged, harmlessWithdrawalBlock: block, harmlessWithdrawalCovers: covers }) => ({
      channelId,
      charged,
      harmless: block === null || covers === null ? null : { logReadUpTo: block, coversUpTo: covers },
    }));
  }

  /** What a read of the channel found of its pending withdrawal: harmless (the verdict), or not (null: judged again at its next event). */
  async recordWithdrawalVerdict(channelId: string, harmless: HarmlessWithdrawal | null): Promise<void> {
    await this.db.prisma.paymentChannel.updateMany({
      where: { channelId },
      data: {
        harmlessWithdrawalBlock: harmless?.logReadUpTo ?? null,
        harmlessWithdrawalCovers: harmless?.coversUpTo ?? null,
      },
    });
  }

  /**
   * What this signer's channels with vouchers not yet claimed come to, per receiver, token and
   * withdraw delay (a channel's claim deadline follows its own delay): since when (the oldest voucher
   * not claimed), what was charged above what is recorded claimed (leaving out channels pushed
   * behind the queue, read as holding no more: markClaimed), whether a claim of ours (or a
   * refund) put vouchers above that into calldata, and whether a payer is withdrawing (seen so:
   * markWithdrawalsSeen, markClaimed).
   */
  async unclaimedByReceiver(signer: ClaimSigner): Promise<UnclaimedOfReceiver[]> {
    const rows = await this.db.sql.query<{
      receiver: string;
      token: string;
      withdraw_delay: number;
      since: Date | string;
      owed: string;
      published: boolean;
      withdrawing: boolean;
    }>(
      `SELECT receiver, token, withdraw_delay, MIN(unclaimed_since) AS since,
              COALESCE(SUM(charged - claimed) FILTER (WHERE unclaimed_since <= now()), 0)::text AS owed,
              COALESCE(BOOL_OR(published > claimed) FILTER (WHERE unclaimed_since <= now()), false) AS published,
              BOOL_OR(withdrawal_seen) AS withdrawing
         FROM payment_channels
        WHERE chain_id = $1 AND escrow = $2 AND receiver_authorizer = $3 AND unclaimed_since IS NOT NULL
        GROUP BY receiver, token, withdraw_delay`,
      [signer.chainId, signer.escrow.toLowerCase(), signer.receiverAuthorizer.toLowerCase()],
    );
    return rows.map((row) => ({
      receiver: row.receiver,
      token: row.token,
      withdrawDelay: row.withdraw_delay,
      since: new Date(row.since),
      owed: BigInt(row.owed),
      published: row.published,
      withdrawing: row.withdrawing,
    }));
  }

  /**
   * Receivers (and tokens) of this chain with a claim of the last week whose settle never landed (the
   * run stopped or failed between the two, or its settle is still on its way), and since when (the
   * oldest such claim): the claimed amount waits in the escrow until a settle sends it on. A week:
   * the claimer tries every run, and one settled by someone else is not asked about for ever.
   */
  async receiversWithUnsettledClaims(
    chainId: number,
    now = new Date(),
  ): Promise<{ receiver: string; token: string; since: Date }[]> {
    const rows = await this.db.prisma.channelClaim.groupBy({
      by: ['receiver', 'token'],
      where: { chainId, settleTxHash: null, createdAt: { gte: new Date(now.getTime() - UNSETTLED_CLAIM_WINDOW_MS) } },
      _min: { createdAt: true },
    });
    return rows.map((row) => ({ receiver: row.receiver, token: row.token, since: row._min.createdAt! }));
  }

  /** The landed claims of this receiver and token with no settle recorded: the ones a settle sent now sends on. */
  async unsettledClaimIds(of: ReceiverClaims): Promise<string[]> {
    const rows = await this.db.prisma.channelClaim.findMany({
      where: { ...of, settleTxHash: null, landedAt: { not: null } },
      select: { id: true },
    });
    return rows.map((row) => row.id);
  }

  /** How many channels with vouchers not yet claimed `signer` cannot claim: another escrow's, or naming another receiver authorizer. */
  strandedUnclaimed(signer: ClaimSigner): Promise<number> {
    return this.db.prisma.paymentChannel.count({ where: { unclaimedSince: { not: null }, NOT: signedBy(signer) } });
  }

  /**
   * Follows the chain's totalClaimed: `claimed` never goes down, and the channel counts as fully
   * claimed only while nothing above it was charged (a voucher accepted meanwhile keeps it open).
   * Given `read` (the chain's balance, and the channel's charged total when it was read), a channel
   * that holds nothing more to claim and was charged nothing since waits `readAgainAfterSeconds`
   * before it is read again: charged above what it holds, it must not stand at the front of the
   * queue, crowding out the channels charged since; nor may it leave the queue, since the read may
   * come from a node behind the chain (one that has not seen a deposit with vouchers on it). A
   * voucher charged on it later brings that date back to its own (recordVoucher): its claim's age
   * deadline runs from when it was taken. A claim that reached some of its vouchers, not all (one
   * taken while the claim was on its way), dates it by the oldest it did not reach: dated by
   * vouchers claimed, a busy channel would stand overdue, then late, at every run.
   */
  async markClaimed(
    channelId: string,
    totalClaimed: bigint,
    read?: { balance: bigint; charged: bigint; readAgainAfterSeconds: number; withdrawing?: boolean },
  ): Promise<void> {
    const exhausted = read !== undefined && read.balance <= totalClaimed;
    await this.db.prisma.$executeRaw`
      UPDATE payment_channels
         SET claimed = GREATEST(claimed, ${totalClaimed}),
             unclaimed_since = CASE WHEN charged <= ${totalClaimed} THEN NULL
                                    WHEN ${exhausted} AND charged = ${read?.charged ?? null}::bigint
                                    THEN now() + make_interval(secs => ${read?.readAgainAfterSeconds ?? 0}::double precision)
                                    -- Claimed further: dated by its oldest voucher the claims did not reach.
                                    WHEN ${totalClaimed} > claimed AND unclaimed_since <= now()
                                    THEN COALESCE((SELECT MIN(p.created_at) FROM payments p
                                                    WHERE p.channel_id = ${channelId}
                                                      AND p.cumulative_amount > ${totalClaimed}), unclaimed_since)
                                    ELSE unclaimed_since END,
             withdrawal_seen = COALESCE(${read?.withdrawing ?? null}::boolean, withdrawal_seen),
             updated_at = now()
       WHERE channel_id = ${channelId}`;
  }

  /**
   * Channels the escrow's WithdrawInitiated events name: seen withdrawing (unclaimedAmong lists
   * them) until a read of the channel shows no pending withdrawal that would take charged money
   * (markClaimed).
   */
  async markWithdrawalsSeen(channelIds: readonly string[]): Promise<void> {
    if (channelIds.length === 0) return;
    await this.db.prisma.paymentChannel.updateMany({
      where: { channelId: { in: [...channelIds] }, withdrawalSeen: false },
      data: { withdrawalSeen: true },
    });
  }

  /**
   * Vouchers about to go into a claim transaction, each channel's total: marked before anything
   * shows the node its calldata (the gas estimate does, and the transaction, pending, reverted or
   * mined, shows them to anyone), and only once the chain's fees are within the relayer's maximum:
   * a voucher of a claim refused for fees before its estimate is still the payer's own, and may ask
   * a cooperative refund; one whose estimate then failed (a revert) stays marked.
   */
  async markPublished(vouchers: readonly { channelId: string; total: bigint }[]): Promise<void> {
    if (vouchers.length === 0) return;
    await this.db.sql.query(
      `UPDATE payment_channels c SET published = GREATEST(c.published, v.total), updated_at = now()
         FROM unnest($1::text[], $2::bigint[]) AS v(channel_id, total)
        WHERE c.channel_id = v.channel_id`,
      [vouchers.map((v) => v.channelId), vouchers.map((v) => v.total.toString())],
    );
  }

  /**
   * A claim signed and about to be broadcast: written first, so that whatever the broadcast's answer
   * and whichever instance runs next (this one restarted, or another), it is waited for while on its
   * way and recorded once landed (ClaimerService.onItsWay), not sent again.
   */
  async recordClaimSent(claim: ClaimRecord): Promise<void> {
    // The same claim signed again at the same nonce and fees (its broadcast refused before) is the same transaction.
    await this.db.prisma.channelClaim.upsert({
      where: { chainId_txHash: { chainId: claim.chainId, txHash: claim.txHash } },
      create: claim,
      update: {},
    });
  }

  /** This receiver's claims written down and not yet seen landed, oldest first. */
  claimsOnTheirWay(of: ReceiverClaims): Promise<SentTransaction[]> {
    return this.db.prisma.channelClaim.findMany({
      where: { ...of, landedAt: null },
      select: { txHash: true, nonce: true, createdAt: true },
      orderBy: { createdAt: 'asc' },
    });
  }

  /**
   * The claim landed: recorded so, and any other claim written down with its nonce dropped (a
   * broadcast tried again at that nonce, or refused there: neither can ever be mined now).
   */
  async recordClaimLanded(chainId: number, txHash: string): Promise<void> {
    const landed = await this.db.prisma.channelClaim.update({
      where: { chainId_txHash: { chainId, txHash } },
      data: { landedAt: new Date() },
      select: { nonce: true },
    });
    // Not in one transaction with the update: a row left by a failure here is dropped by the next run.
    if (landed.nonce !== null)
      await this.db.prisma.channelClaim.deleteMany({
        where: { chainId, nonce: landed.nonce, landedAt: null, NOT: { txHash } },
      });
  }

  /**
   * The claim `replaced`, re-priced at its nonce (fee-bump.ts), about to be broadcast as `txHash`:
   * written down as a copy of it before it is sent. Whichever of the two lands is recorded and the
   * other dropped (recordClaimLanded, onItsWay); the claim it copies must still be on its way.
   * Written already (signing is deterministic: the same replacement, its broadcast refused at an
   * earlier run), it is the same transaction at the same nonce and is sent again.
   */
  async recordClaimReplacement(chainId: number, replaced: string, txHash: string): Promise<void> {
    const rows = await this.db.sql.query(
      `INSERT INTO channel_claims (id, chain_id, receiver, token, tx_hash, channels, amount, nonce)
       SELECT $3::uuid, chain_id, receiver, token, $4, channels, amount, nonce FROM channel_claims
        WHERE chain_id = $1::int AND tx_hash = $2 AND landed_at IS NULL
       ON CONFLICT (chain_id, tx_hash) DO UPDATE SET tx_hash = EXCLUDED.tx_hash
        WHERE channel_claims.nonce IS NOT DISTINCT FROM EXCLUDED.nonce AND channel_claims.landed_at IS NULL
       RETURNING id`,
      [chainId, replaced, randomUUID(), txHash],
    );
    if (rows.length === 0)
      throw new Error(
        `claim ${replaced} is no longer on its way, or ${txHash} is another nonce's; nothing replaces it`,
      );
  }

  /**
   * Every claim, settle, refund and deposit of ours, of any receiver or channel, written down and not yet
   * seen landed: what of the relayer's may still be pending (StuckAheadService), each with its
   * relayer nonce and when it was sent; a refund once per hash sent for it (each a row already for
   * the others). A claim row of before nonces were kept is left out.
   */
  async relayerTransactionsOnTheirWay(chainId: number): Promise<OnItsWay[]> {
    const rows = await this.db.sql.query<{
      kind: OnItsWay['kind'];
      tx_hash: string;
      nonce: number;
      sent_at: Date | string;
      channel_id: string | null;
      refund_id: string | null;
      refund_tx: string | null;
    }>(
      `SELECT 'claim' AS kind, tx_hash, nonce, created_at AS sent_at, NULL AS channel_id, NULL AS refund_id,
              NULL AS refund_tx
         FROM channel_claims WHERE chain_id = $1::int AND landed_at IS NULL AND nonce IS NOT NULL
       UNION ALL
       SELECT 'settle', tx_hash, nonce, created_at, NULL, NULL, NULL
         FROM channel_settles WHERE chain_id = $1::int AND landed_at IS NULL
       UNION ALL
       SELECT 'refund', sent.tx_hash, refund_tx_nonce, refund_tx_sent_at, channel_id, refund_id::text, refund_tx
         FROM payment_channels,
              unnest(array_prepend(refund_tx::text, COALESCE(refund_replaced_txs, '{}'))) AS sent(tx_hash)
        WHERE chain_id = $1::int AND refund_id IS NOT NULL AND refund_tx IS NOT NULL
          AND refund_tx_nonce IS NOT NULL AND refund_tx_sent_at IS NOT NULL
       UNION ALL
       SELECT 'deposit', tx_hash, nonce, created_at, NULL, NULL, NULL
         FROM channel_deposits WHERE chain_id = $1::int AND landed_at IS NULL`,
      [chainId],
    );
    return rows.map((row) => ({
      kind: row.kind,
      txHash: row.tx_hash,
      nonce: Number(row.nonce),
      sentAt: new Date(row.sent_at),
      ...(row.channel_id && row.refund_id && row.refund_tx
        ? { refund: { channelId: row.channel_id, id: row.refund_id, current: row.refund_tx } }
        : {}),
    }));
  }

  /** A claim written down that claimed nothing and never will: reverted, or its nonce taken by another transaction. */
  async dropClaim(chainId: number, txHash: string): Promise<void> {
    await this.db.prisma.channelClaim.deleteMany({ where: { chainId, txHash, landedAt: null } });
  }

  /**
   * A settle signed and about to be broadcast: written first, so that whatever the broadcast's answer
   * and whichever instance runs next, it is waited for while on its way and, once landed, the claims
   * it sends on are marked settled by it (settlesOnTheirWay), not sent again.
   */
  async recordSettleSent(settle: SettleRecord): Promise<void> {
    // The same settle signed again at the same nonce and fees (its broadcast refused before) is the same transaction.
    await this.db.prisma.channelSettle.upsert({
      where: { chainId_txHash: { chainId: settle.chainId, txHash: settle.txHash } },
      create: settle,
      update: {},
    });
  }

  /** This receiver's settles written down and not yet seen landed, oldest first. */
  settlesOnTheirWay(of: ReceiverClaims): Promise<SentTransaction[]> {
    return this.db.prisma.channelSettle.findMany({
      where: { ...of, landedAt: null },
      select: { txHash: true, nonce: true, createdAt: true },
      orderBy: { createdAt: 'asc' },
    });
  }

  /**
   * The settle landed: recorded so, the claims it sent on marked settled by it, and any other settle
   * written down with its nonce dropped (it can never be mined now), in one transaction.
   */
  async recordSettleLanded(chainId: number, txHash: string): Promise<void> {
    await this.db.prisma.$transaction(async (tx) => {
      const landed = await tx.channelSettle.update({
        where: { chainId_txHash: { chainId, txHash } },
        data: { landedAt: new Date() },
        select: { nonce: true, claimIds: true },
      });
      await tx.channelClaim.updateMany({
        where: { id: { in: landed.claimIds as string[] }, settleTxHash: null },
        data: { settleTxHash: txHash },
      });
      await tx.channelSettle.deleteMany({ where: { chainId, nonce: landed.nonce, landedAt: null, NOT: { txHash } } });
    });
  }

  /** The settle `replaced`, re-priced at its nonce, about to be broadcast as `txHash`: as recordClaimReplacement, and as idempotent. */
  async recordSettleReplacement(chainId: number, replaced: string, txHash: string): Promise<void> {
    const rows = await this.db.sql.query(
      `INSERT INTO channel_settles (id, chain_id, receiver, token, tx_hash, nonce, claim_ids)
       SELECT $3::uuid, chain_id, receiver, token, $4, nonce, claim_ids FROM channel_settles
        WHERE chain_id = $1::int AND tx_hash = $2 AND landed_at IS NULL
       ON CONFLICT (chain_id, tx_hash) DO UPDATE SET tx_hash = EXCLUDED.tx_hash
        WHERE channel_settles.nonce IS NOT DISTINCT FROM EXCLUDED.nonce AND channel_settles.landed_at IS NULL
       RETURNING id`,
      [chainId, replaced, randomUUID(), txHash],
    );
    if (rows.length === 0)
      throw new Error(
        `settle ${replaced} is no longer on its way, or ${txHash} is another nonce's; nothing replaces it`,
      );
  }

  /** A settle written down that sent nothing on and never will: reverted, or its nonce taken by another transaction. */
  async dropSettle(chainId: number, txHash: string): Promise<void> {
    await this.db.prisma.channelSettle.deleteMany({ where: { chainId, txHash, landedAt: null } });
  }
  /**
   * A deposit the relayer signed for a payer, about to be broadcast: written first, so that whatever
   * the broadcast answers it can be re-priced while stuck (RelayerDepositsService, StuckAheadService)
   * and its replacement recognised when mined. The same deposit signed again (same nonce and fees) is the same row.
   * Written only while lease `leaseId` is still the payer's and still counts (LEASE_WRITTEN_WITHIN_SECONDS,
   * renewed here): every exact claim of the payer written meanwhile counted the deposit, by its lease
   * until now and by this row after. Else nothing is written (DepositLeaseLost) and nothing may be sent:
   * a request stalled past it, or whose lease another deposit took, was counted by nobody since. Nor
   * while the same deposit is written down at another relayer nonce and not seen landed (DepositOnItsWay).
   */
  async recordDepositSent(deposit: DepositRecord, leaseId: string): Promise<void> {
    await this.db.sql.transaction(async (tx) => {
      const held = await tx.query(
        `UPDATE deposit_leases SET taken_at = now()
          WHERE payer = $1 AND lease_id = $2::uuid AND taken_at > now() - make_interval(secs => $3::int)
          RETURNING lease_id`,
        [deposit.payer.toLowerCase(), leaseId, LEASE_WRITTEN_WITHIN_SECONDS],
      );
      if (held.length === 0) throw new DepositLeaseLost();
      // The same authorization written down at another relayer nonce, not seen landed: both could be
      // mined, the second reverting at our gas. At the same nonce, at most one of them can be.
      const elsewhere = await tx.query(
        `SELECT 1 FROM channel_deposits
          WHERE payer = $1 AND chain_id = $2::int AND authorization_nonce = $3 AND landed_at IS NULL AND nonce <> $4::int
          LIMIT 1`,
        [deposit.payer.toLowerCase(), deposit.chainId, deposit.authorizationNonce.toLowerCase(), deposit.nonce],
      );
      if (elsewhere.length > 0) throw new DepositOnItsWay();
      await tx.query(
        `INSERT INTO channel_deposits (id, chain_id, channel_id, payer, authorization_nonce, tx_hash, nonce, amount, valid_before)
         VALUES ($1::uuid, $2::int, $3, $4, $5, $6, $7::int, $8::bigint, $9::timestamptz)
         ON CONFLICT (chain_id, tx_hash) DO NOTHING`,
        [
          randomUUID(),
          deposit.chainId,
          deposit.channelId,
          deposit.payer.toLowerCase(),
          deposit.authorizationNonce.toLowerCase(),
          deposit.txHash.toLowerCase(),
          deposit.nonce,
          deposit.amount.toString(),
          deposit.validBefore,
        ],
      );
    });
  }

  /** Deposits written down and not yet seen landed, oldest first. */
  depositsOnTheirWay(chainId: number): Promise<SentDeposit[]> {
    return this.db.prisma.channelDeposit.findMany({
      where: { chainId, landedAt: null },
      select: {
        txHash: true,
        nonce: true,
        createdAt: true,
        channelId: true,
        payer: true,
        authorizationNonce: true,
        amount: true,
        validBefore: true,
      },
      orderBy: { createdAt: 'asc' },
    });
  }

  /**
   * The deposit `replaced`, re-priced at its nonce, about to be broadcast as `txHash`: written down
   * as a copy of it (its channel, payer, nonce and amount) before it is sent, as recordClaimReplacement, and as idempotent.
   */
  async recordDepositReplacement(chainId: number, replaced: string, txHash: string): Promise<void> {
    const rows = await this.db.sql.query(
      `INSERT INTO channel_deposits (id, chain_id, channel_id, payer, authorization_nonce, tx_hash, nonce, amount, valid_before)
       SELECT $3::uuid, chain_id, channel_id, payer, authorization_nonce, $4, nonce, amount, valid_before FROM channel_deposits
        WHERE chain_id = $1::int AND tx_hash = $2 AND landed_at IS NULL
       ON CONFLICT (chain_id, tx_hash) DO UPDATE SET tx_hash = EXCLUDED.tx_hash
        WHERE channel_deposits.nonce = EXCLUDED.nonce AND channel_deposits.landed_at IS NULL
       RETURNING id`,
      [chainId, replaced, randomUUID(), txHash],
    );
    if (rows.length === 0)
      throw new Error(
        `deposit ${replaced} is no longer on its way, or ${txHash} is another nonce's; nothing replaces it`,
      );
  }

  /**
   * Whether `mined` was written down as a deposit into this channel at this relayer nonce: the one
   * sent or a re-priced copy of it, either of which is the deposit (whatever rows at the nonce were dropped since).
   */
  async isDepositAt(chainId: number, at: { channelId: string; nonce: number }, mined: string): Promise<boolean> {
    const found = await this.db.prisma.channelDeposit.count({
      where: { chainId, channelId: at.channelId, nonce: at.nonce, txHash: mined.toLowerCase() },
    });
    return found > 0;
  }

  /** The deposit landed: recorded so, and the other hashes written down at its nonce dropped (none can be mined now). */
  async recordDepositLanded(chainId: number, txHash: string): Promise<void> {
    const landed = await this.db.prisma.channelDeposit.update({
      where: { chainId_txHash: { chainId, txHash: txHash.toLowerCase() } },
      data: { landedAt: new Date() },
      select: { nonce: true },
    });
    await this.db.prisma.channelDeposit.deleteMany({
      where: { chainId, nonce: landed.nonce, landedAt: null, NOT: { txHash: txHash.toLowerCase() } },
    });
  }

  /** A deposit written down that deposited nothing and never will: reverted, or its nonce taken by another transaction. */
  async dropDeposit(chainId: number, txHash: string): Promise<void> {
    await this.db.prisma.channelDeposit.deleteMany({ where: { chainId, txHash, landedAt: null } });
  }
}
