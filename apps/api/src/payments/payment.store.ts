import { Inject, Injectable } from '@nestjs/common';
import { AUTHORIZATION_CLOCK_SKEW_SECONDS } from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database';
import { isLockNotAvailable } from '../db/prisma-errors';
import type { SqlSession } from '../db/sql-driver';
import { DATABASE } from '../db/tokens';
import type { Payment, Prisma } from '../generated/prisma/client';
import type { SitePaymentTerms } from '../sites/site-payment-terms.store';

/** A claim (or relayed deposit) of the same payer written before this one and not yet settled when this one was written. */
export type ClaimAhead = Pick<Payment, 'amount' | 'nonce'>;

type ClaimAheadRow = { id: string; amount: string | bigint; nonce: string | null };
/** What moves a payer's USDC in flight: an exact settlement's claim, or a deposit the relayer sends for it (by its lease, or a hash sent). */
export type MoneyInFlight = ClaimAhead & { id: string; kind: 'claim' | 'lease' | 'sent' };
const claimAheadFromRow = (row: ClaimAheadRow): ClaimAhead => ({ amount: BigInt(row.amount), nonce: row.nonce });

/** How many of a payer's newest confirmed payments settledLast looks among for the highest blocks. */
const RECENTLY_SETTLED = 64;

/**
 * How long a deposit's lease counts as its deposit in flight: the moments before its broadcast,
 * written down then (channel_deposits) only while its lease still counts (ChannelStore.recordDepositSent).
 */
export const LEASE_COUNTED_SECONDS = 600;

/**
 * What of a payer's USDC the relayer may be moving ($1 payer, $2 chain id, $3 token): its
 * authorization claims in flight, and its relayed deposit, by its lease before its broadcast and by
 * each hash sent for it after (one a later deposit's lease replaced included) until one is seen
 * landed. Both move the payer's USDC by an EIP-3009 authorization, read as used once mined, so both
 * are counted alike (each authorization once, payerCoverage). A deposit counts while its
 * authorization can still land (its end, give or take a block clock's lag of ours); a lease left by
 * a process that died before sending counts LEASE_COUNTED_SECONDS. Leases and deposits hold this
 * API's token; rows written before they named an amount are not counted.
 */
const PAYER_MONEY_IN_FLIGHT = `SELECT id, amount, nonce, 'claim' AS kind FROM payments
  WHERE payer = $1 AND chain_id = $2::int AND asset = $3 AND method = 'authorization' AND status IN ('submitting', 'submitted')
  UNION ALL
  SELECT lease_id, amount, nonce, 'lease' FROM deposit_leases
  WHERE payer = $1 AND amount IS NOT NULL AND taken_at > now() - make_interval(secs => ${LEASE_COUNTED_SECONDS})
    AND valid_before > now() - make_interval(secs => ${AUTHORIZATION_CLOCK_SKEW_SECONDS})
  UNION ALL
  SELECT id, amount, authorization_nonce, 'sent' FROM channel_deposits
  WHERE payer = $1 AND chain_id = $2::int AND landed_at IS NULL AND amount IS NOT NULL
    AND valid_before > now() - make_interval(secs => ${AUTHORIZATION_CLOCK_SKEW_SECONDS})`;

/**
 * Distinct from every other advisory lock: (PAYER_TURN_LOCK, hash of chain, token and payer). Two-key
 * locks never meet the one-key locks of the migrator and the reconciler.
 */
const PAYER_TURN_LOCK = 0x63676174; // 'cgat'
/**
 * How long a claim waits for its payer's turn: a turn holds no chain call, so a longer wait means
 * the instance holding it stalled (frozen, its link to the database hung), and every request of
 * that payer, on every instance, would wait on it with a pooled connection each.
 */
export const PAYER_TURN_WAIT_MS = 3_000;

/** The payer's turn was not had within PAYER_TURN_WAIT_MS: nothing was written. */
export class PayerTurnBusy extends Error {
  constructor() {
    super('the payer’s turn was held too long by another claim');
  }
}

/**
 * The site's terms the claim was judged by changed before it was written, or were being changed
 * for longer than PAYER_TURN_WAIT_MS: nothing was written, and the payment is judged again.
 */
export class PaymentTermsChanged extends Error {
  constructor() {
    super('the site’s terms changed while the claim was written');
  }
}

/** The advisory lock that is a payer's turn (its two keys' arguments). */
export function payerTurnLock(chainId: number, asset: string, payer: string): [number, string] {
  return [PAYER_TURN_LOCK, `${chainId}:${asset}:${payer}`];
}

/** A payer's relayer transactions: keyed as its claims are (the chain, its token as gates name it, the lower-case payer). */
export interface PayerKey {
  chainId: number;
  asset: string;
  payer: string;
}

/**
 * Takes the payer's turn in transaction `tx` (held to its end) and reads what of the payer's USDC
 * the relayer may be moving: what was written in a turn before this one (PayerTurnBusy past
 * PAYER_TURN_WAIT_MS). Whatever is written in this turn, every later turn reads.
 */
export async function inPayerTurn(tx: SqlSession, key: PayerKey): Promise<MoneyInFlight[]> {
  await tx.query(`SET LOCAL lock_timeout = ${PAYER_TURN_WAIT_MS}`);
  await tx
    .query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', payerTurnLock(key.chainId, key.asset, key.payer))
    .catch((error: unknown) => {
      throw isLockNotAvailable(error) ? new PayerTurnBusy() : error;
    });
  const rows = await tx.query<ClaimAheadRow & { kind: MoneyInFlight['kind'] }>(PAYER_MONEY_IN_FLIGHT, [
    key.payer,
    key.chainId,
    key.asset,
  ]);
  return rows.map((row) => ({ id: row.id, kind: row.kind, ...claimAheadFromRow(row) }));
}

/** An authorization's claim: the payment row a settlement starts from. */
export type AuthorizationClaim = Pick<
  Prisma.PaymentUncheckedCreateInput,
  | 'gateId'
  | 'gateIdSha256'
  | 'siteId'
  | 'publisherId'
  | 'url'
  | 'chainId'
  | 'asset'
  | 'payer'
  | 'payTo'
  | 'amount'
  | 'status'
  | 'nonce'
  | 'authorization'
  | 'paymentIdentifier'
  | 'paymentFingerprint'
  | 'tokenKid'
>;

/** The payments' SQL: written without Prisma where a payment waits on it (the settlement path), through it elsewhere. */
@Injectable()
export class PaymentStore {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  /**
   * Writes an authorization's claim together with what else of the payer's USDC the relayer may be
   * moving (its other claims in flight, its relayed deposit: inPayerTurn), in one turn of that payer (a transaction holding a lock on it, across API instances): the claims it reads
   * are exactly those written before it, and every claim written after it reads it. Ordered by
   * creation time instead, a claim created first but committed last missed the other, which saw it
   * as behind: both were broadcast and one reverted. Nothing slow runs inside: no chain call.
   * A unique violation (the gate, the nonce or the payment-identifier taken) rolls it all back.
   * The site's terms the claim was judged by (`terms`: its prices' version, its publisher's payout
   * address) must be the site's still, read under a share lock held to the commit, else nothing is
   * written (PaymentTermsChanged): a publisher's change waits for the claim, so a resend that reads
   * the change finds this claim, and a claim written never contradicts what a resend was told.
   */
  claimInPayerTurn(
    claim: AuthorizationClaim,
    terms: Pick<SitePaymentTerms, 'pricingVersion' | 'payoutAddress'>,
  ): Promise<{ payment: Payment; ahead: ClaimAhead[] }> {
    return this.db.sql.transaction(async (tx) => {
      const ahead = await inPayerTurn(tx, claim);
      const standing = await tx
        .query(
          `SELECT s.id FROM sites s JOIN publishers p ON p.id = s.publisher_id
            WHERE s.id = $1::uuid AND s.pricing_version = $2::int AND p.payout_address::text IS NOT DISTINCT FROM $3::text
              FOR SHARE OF s, p`,
          [claim.siteId, terms.pricingVersion, terms.payoutAddress],
        )
        .catch((error: unknown) => {
          throw isLockNotAvailable(error) ? new PaymentTermsChanged() : error;
        });
      if (standing.length === 0) throw new PaymentTermsChanged();
      const [row] = await tx.query<PaymentRow>(
        `INSERT INTO payments (id, gate_id, site_id, publisher_id, url, method, status, chain_id, asset, payer, pay_to, amount,
                               nonce, "authorization", payment_identifier, payment_fingerprint, token_kid, gate_id_sha256)
         VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5, 'authorization', $6::"PaymentStatus", $7::int, $8, $9, $10, $11::bigint,
                 $12, $13::jsonb, $14, $15, $16, $17)
         RETURNING *`,
        [
          randomUUID(),
          claim.gateId,
          claim.siteId,
          claim.publisherId,
          claim.url,
          claim.status,
          claim.chainId,
          claim.asset,
          claim.payer,
          claim.payTo,
          BigInt(claim.amount as bigint | number).toString(),
          claim.nonce ?? null,
          claim.authorization === undefined ? null : JSON.stringify(claim.authorization),
          claim.paymentIdentifier ?? null,
          claim.paymentFingerprint ?? null,
          claim.tokenKid ?? null,
          claim.gateIdSha256 ?? null,
        ],
      );
      return {
        payment: paymentFromRow(row),
        ahead,
      };
    });
  }

  /**
   * The payer's other authorization claims in flight (being sent, or sent and not yet confirmed),
   * whatever their order: the reconciler, sending a claim its request left, cannot tell which of
   * them that request or another counted as written before it, so it counts them all.
   */
  async othersInFlight(payment: Pick<Payment, 'id' | 'payer' | 'chainId' | 'asset'>): Promise<ClaimAhead[]> {
    const rows = await this.db.sql.query<ClaimAheadRow>(PAYER_MONEY_IN_FLIGHT, [
      payment.payer,
      payment.chainId,
      payment.asset,
    ]);
    return rows.filter((row) => row.id !== payment.id).map(claimAheadFromRow);
  }

  /**
   * The payer's authorization payments settled last: the `count` in the highest blocks among its
   * newest confirmed (within the hour). Read beside the balance: a node that has not reached the
   * highest of those blocks (one behind a load balancer, a block or two behind the one that
   * answered its receipt) answers a balance that still holds its amount, and only its
   * authorization, read as unused in that same call, tells; a node that has reached it has reached
   * every settlement before it. Read after the claims in flight: one that left them since is here.
   * The highest block is among the newest confirmed: any confirmed after it was in flight with it
   * (at most MAX_PAYER_SETTLEMENTS_IN_FLIGHT), give or take instances' clocks, which stamp
   * confirmed_at; RECENTLY_SETTLED of them, by the (payer, confirmed_at, id) index, leave room for both.
   * With them, the `count` deposits the relayer sent for the payer seen landed last (within the hour,
   * one at a time per payer): a node behind one answers a balance that still holds its amount.
   */
  async settledLast(payment: Pick<Payment, 'payer' | 'chainId' | 'asset'>, count: number): Promise<ClaimAhead[]> {
    const rows = await this.db.sql.query<ClaimAheadRow>(
      `(SELECT id, amount, nonce FROM (
          SELECT id, amount, nonce, block_number FROM payments
           WHERE payer = $1 AND confirmed_at > now() - interval '1 hour'
             AND chain_id = $2::int AND asset = $3 AND method = 'authorization' AND status = 'confirmed'
           ORDER BY confirmed_at DESC, id DESC LIMIT $5::int
        ) newest
        ORDER BY block_number DESC NULLS LAST LIMIT $4::int)
       UNION ALL
       (SELECT id, amount, authorization_nonce FROM channel_deposits
         WHERE payer = $1 AND chain_id = $2::int AND landed_at > now() - interval '1 hour' AND amount IS NOT NULL
         ORDER BY landed_at DESC LIMIT $4::int)`,
      [payment.payer, payment.chainId, payment.asset, count, RECENTLY_SETTLED],
    );
    return rows.map(claimAheadFromRow);
  }

  /** The payment of a gate (by its ref), if any. */
  byGate(gateRef: string): Promise<Payment | null> {
    return this.one('SELECT * FROM payments WHERE gate_id = $1::uuid', [gateRef]);
  }

  byId(id: string): Promise<Payment | null> {
    return this.one('SELECT * FROM payments WHERE id = $1::uuid', [id]);
  }

  /** The payment an authorization (its payer's nonce, on this chain and token) made, if any. */
  byNonce(key: { chainId: number; asset: string; payer: string; nonce: string }): Promise<Payment | null> {
    return this.one('SELECT * FROM payments WHERE chain_id = $1::int AND asset = $2 AND payer = $3 AND nonce = $4', [
      key.chainId,
      key.asset,
      key.payer,
      key.nonce,
    ]);
  }

  /**
   * The payments of these authorizations (each a payer's nonce, on this chain and token), in one
   * statement: a transaction may use many authorizations, and a proof is judged against them all.
   */
  async byNonces(
    key: { chainId: number; asset: string },
    used: { payer: string; nonce: string }[],
  ): Promise<Payment[]> {
    if (used.length === 0) return [];
    // Typed as the columns are, so the (chain_id, asset, payer, nonce) index answers; such a cast
    // cuts longer text to the column's width, so only values of exactly that width are looked up.
    if (used.some(({ payer, nonce }) => payer.length !== 42 || nonce.length !== 66))
      throw new Error('byNonces: payers are 20-byte and nonces 32-byte hex, 0x-prefixed');
    const rows = await this.db.sql.query<PaymentRow>(
      `SELECT * FROM payments WHERE chain_id = $1::int AND asset = $2
          AND (payer, nonce) IN (SELECT * FROM unnest($3::char(42)[], $4::char(66)[]))`,
      [key.chainId, key.asset, used.map((u) => u.payer), used.map((u) => u.nonce)],
    );
    return rows.map(paymentFromRow);
  }

  /** The payment a payer made on a site under an x402 payment-identifier, if any. */
  byIdentifier(key: { siteId: string; payer: string; paymentIdentifier: string }): Promise<Payment | null> {
    return this.db.prisma.payment.findUnique({ where: { siteId_payer_paymentIdentifier: key } });
  }

  /**
   * Whether the payer has a payment to one of the publisher's sites settled on this chain and token
   * within the last `withinMs`: money paid to that publisher, which a payer cannot fake by paying
   * itself on a site of its own. Answered by the (payer, confirmed_at, id) index: a payer's recent
   * payments are few.
   */
  async hasPaidPublisherWithin(
    key: { chainId: number; asset: string; payer: string; publisherId: string },
    withinMs: number,
  ): Promise<boolean> {
    const rows = await this.db.sql.query(
      `SELECT 1 FROM payments p JOIN sites s ON s.id = p.site_id
        WHERE p.payer = $1 AND p.confirmed_at > now() - $2::bigint * interval '1 millisecond'
          AND p.chain_id = $3::int AND p.asset = $4 AND p.status = 'confirmed' AND s.publisher_id = $5::uuid
        LIMIT 1`,
      [key.payer.toLowerCase(), withinMs, key.chainId, key.asset, key.publisherId],
    );
    return rows.length > 0;
  }

  /**
   * The payments recorded for transfers of one transaction: by their hash, or one their settlement
   * had before it was re-priced (the replaced transaction may be the one mined).
   */
  byTransaction(chainId: number, txHash: string): Promise<Payment[]> {
    return this.db.prisma.payment.findMany({
      where: { chainId, OR: [{ txHash }, { replacedTxHashes: { has: txHash } }] },
    });
  }

  /** The payment one Transfer of a transaction (its log index) made, other than `exceptId`'s, if any. */
  byTransfer(
    key: { chainId: number; txHash: string; transferLogIndex: number | null | undefined },
    exceptId?: string,
  ): Promise<Payment | null> {
    return this.db.prisma.payment.findFirst({
      where: { ...key, ...(exceptId === undefined ? {} : { id: { not: exceptId } }) },
    });
  }

  /**
   * Moves recorded payments to the log indexes their Transfers sit at now (a reorg mined their
   * transaction again elsewhere in its block), in one transaction: through indexes no log has
   * (negative) first, so that payments trading places never meet on the unique key.
   */
  async moveTransferIndexes(moves: readonly { id: string; transferLogIndex: number }[]): Promise<void> {
    if (moves.length === 0) return;
    // A claim its request deleted meanwhile (transfersStillHold) is skipped, not an error.
    const update = (id: string, transferLogIndex: number) =>
      this.db.prisma.payment.updateMany({ where: { id }, data: { transferLogIndex } });
    await this.db.prisma.$transaction([
      ...moves.map((move, i) => update(move.id, -1 - i)),
      ...moves.map((move) => update(move.id, move.transferLogIndex)),
    ]);
  }

  /** Records a transfer's payment, confirmed on chain already; a unique violation when the gate or the transfer is taken. */
  claimTransfer(claim: Prisma.PaymentUncheckedCreateInput): Promise<Payment> {
    return this.db.prisma.payment.create({ data: claim });
  }

  /**
   * Up to `limit` unfinished settlements (broadcast, or claimed at least `claimAgeMs` ago and not
   * yet broadcast), the least recently checked first, each stamped as checked now: a round robin, so
   * every open payment is reached within ceil(open / limit) passes however many others stay open.
   */
  async openForReconciliation(claimAgeMs: number, limit: number): Promise<Payment[]> {
    // Aged by the database's clock, which stamps an authorization's claim (claimInPayerTurn): an
    // instance whose clock runs ahead would take a claim made a moment ago, which its request may
    // be broadcasting right now.
    const [{ before }] = await this.db.sql.query<{ before: Date | string }>(
      'SELECT now() - make_interval(secs => $1::double precision) AS before',
      [claimAgeMs / 1000],
    );
    const claimedBefore = new Date(before);
    // A claim its request took for a broadcast (its hash recorded, still submitting) may be on its
    // way to the node: it is the reconciler's only once untouched that long too.
    const open = await this.db.prisma.payment.findMany({
      where: {
        OR: [
          { status: 'submitted' },
          {
            status: 'submitting',
            createdAt: { lt: claimedBefore },
            OR: [{ txHash: null }, { checkedAt: null }, { checkedAt: { lt: claimedBefore } }],
          },
        ],
      },
      orderBy: [{ checkedAt: { sort: 'asc', nulls: 'first' } }, { createdAt: 'asc' }],
      take: limit,
    });
    await this.db.prisma.payment.updateMany({
      where: { id: { in: open.map((payment) => payment.id) } },
      data: { checkedAt: new Date() },
    });
    return open;
  }

  /**
   * Settlements of ours on this chain that may be pending: recorded for a broadcast and not
   * confirmed, with every hash sent for them (StuckAheadService re-prices the one holding an urgent
   * claim behind its nonce; the current hash's broadcast may have failed while an earlier one waits).
   */
  settlementsInFlight(
    chainId: number,
  ): Promise<Pick<Payment, 'id' | 'txHash' | 'replacedTxHashes' | 'txSentAt' | 'createdAt'>[]> {
    return this.db.prisma.payment.findMany({
      where: { chainId, status: { in: ['submitting', 'submitted'] }, txHash: { not: null } },
      select: { id: true, txHash: true, replacedTxHashes: true, txSentAt: true, createdAt: true },
    });
  }

  /**
   * A request takes its claim for the broadcast of `txHash`, recorded before it is sent: only a
   * claim still submitting with the hash it last recorded (`recorded`: null, or its own refused
   * one), so whichever of the request and the reconciler takes it first sends it, and the other
   * nothing. Stamped as checked, so the reconciler leaves it to its request for a claim's wait.
   */
  async takeForBroadcast(id: string, recorded: string | null, txHash: string): Promise<boolean> {
    const rows = await this.db.sql.query(
      `UPDATE payments SET tx_hash = $3, tx_sent_at = now(), checked_at = now()
        WHERE id = $1::uuid AND status = 'submitting' AND tx_hash IS NOT DISTINCT FROM $2::char(66) RETURNING id`,
      [id, recorded, txHash],
    );
    return rows.length === 1;
  }

  /**
   * The reconciler is about to broadcast the settlement again as `txHash`: recorded first, so that
   * no request releases the claim as unsent, or sends it too, while it is on its way. Only while the
   * payment still has the hash it was judged by (`seen`: null for a claim nobody took for a broadcast);
   * false, and nothing is to be sent, when it was taken, confirmed or released meanwhile.
   */
  async markResubmitted(id: string, seen: string | null, txHash: string): Promise<boolean> {
    const { count } = await this.db.prisma.payment.updateMany({
      where: { id, status: { not: 'confirmed' }, txHash: seen },
      data: { status: 'submitted', txHash, txSentAt: new Date() },
    });
    return count > 0;
  }

  /**
   * The reconciler is about to broadcast `txHash` in place of the payment's pending `replaced` (the
   * same transaction at its nonce, re-priced): recorded first, the replaced hash kept, since either
   * may be the one mined. Only while the payment still has `replaced` and is not confirmed.
   */
  async recordReplacement(id: string, replaced: string, txHash: string): Promise<boolean> {
    const rows = await this.db.sql.query(
      `UPDATE payments
          SET tx_hash = $3, replaced_tx_hashes = array_append(replaced_tx_hashes, $2::text), tx_sent_at = now(),
              status = 'submitted'
        WHERE id = $1::uuid AND status <> 'confirmed' AND tx_hash = $2
        RETURNING id`,
      [id, replaced, txHash],
    );
    return rows.length === 1;
  }

  /**
   * Forgets a claim its request never broadcast (`recorded`: the hash it took it for, whose
   * broadcast is known not to have left), unless it was sent meanwhile (by the reconciler of any
   * instance, once the request ran past the settlement timeout): whether it was forgotten.
   */
  async releaseUnsent(id: string, recorded: string | null = null): Promise<boolean> {
    const { count } = await this.db.prisma.payment.deleteMany({
      where: { id, status: 'submitting', txHash: recorded },
    });
    return count > 0;
  }

  /** Forgets a settlement that never happened (the gate is payable again); a confirmed payment stays. */
  async deleteUnconfirmed(id: string): Promise<void> {
    await this.db.prisma.payment.deleteMany({ where: { id, status: { not: 'confirmed' } } });
  }

  /**
   * The settlement a request took its claim for (takeForBroadcast) reached the node, or may have,
   * as `txHash`; throws when the claim is gone. Only a claim still submitting with that hash is
   * marked: the reconciler may have sent (or confirmed) it meanwhile, and that record stands.
   */
  async markSubmitted(id: string, txHash: string): Promise<void> {
    const rows = await this.db.sql.query(
      `UPDATE payments SET status = 'submitted' WHERE id = $1::uuid AND status = 'submitting' AND tx_hash = $2 RETURNING id`,
      [id, txHash],
    );
    if (rows.length === 0 && !(await this.byId(id)))
      throw new Error(`Payment ${id} is gone; its settlement ${txHash} was broadcast`);
  }

  /**
   * Confirms a payment unless something confirmed it already (the request or the reconciler, whichever
   * comes first): 'confirmed' when this call did. Its transfer pays no other gate (the unique index),
   * nor does a transaction whose payment was confirmed before transfers were told apart (no log
   * index). `secretsVersion`: the site's secrets' version its token was signed under (null: no
   * token), which must still be the site's, read under a share lock: a rotation since may have
   * revoked that secret, and nothing is written ('secrets-changed'; 'not-confirmed' for a payment
   * confirmed already or gone).
   */
  async confirm(
    id: string,
    confirmed: Pick<
      Payment,
      'txHash' | 'transferLogIndex' | 'blockNumber' | 'confirmedAt' | 'tokenKid' | 'tokenIssuedAt' | 'tokenExpiresAt'
    >,
    secretsVersion: number | null,
  ): Promise<'confirmed' | 'not-confirmed' | 'secrets-changed'> {
    const date = (value: Date | null) => value?.toISOString() ?? null;
    const [row] = await this.db.sql.query<{ secrets_current: boolean; confirmed: boolean; open: boolean }>(
      `WITH site AS (
         SELECT s.secrets_version FROM sites s
          WHERE s.id = (SELECT site_id FROM payments WHERE id = $1::uuid)
            FOR SHARE OF s),
       secrets AS (
         SELECT $9::int IS NULL OR EXISTS (SELECT 1 FROM site WHERE secrets_version = $9::int) AS current),
       confirmed AS (
         UPDATE payments
            SET status = 'confirmed', tx_hash = $2, transfer_log_index = $8::int, block_number = $3::bigint,
                confirmed_at = $4::timestamptz, token_kid = $5, token_issued_at = $6::timestamptz,
                token_expires_at = $7::timestamptz
          WHERE id = $1::uuid AND status <> 'confirmed' AND (SELECT current FROM secrets)
            AND NOT EXISTS (SELECT 1 FROM payments earlier
                             WHERE earlier.chain_id = payments.chain_id AND earlier.tx_hash = $2
                               AND earlier.transfer_log_index IS NULL AND earlier.status = 'confirmed')
          RETURNING id)
       SELECT (SELECT current FROM secrets) AS secrets_current, EXISTS (SELECT 1 FROM confirmed) AS confirmed,
              EXISTS (SELECT 1 FROM payments WHERE id = $1::uuid AND status <> 'confirmed') AS open`,
      [
        id,
        confirmed.txHash,
        confirmed.blockNumber?.toString() ?? null,
        date(confirmed.confirmedAt),
        confirmed.tokenKid,
        date(confirmed.tokenIssuedAt),
        date(confirmed.tokenExpiresAt),
        confirmed.transferLogIndex,
        secretsVersion,
      ],
    );
    if (row.confirmed) return 'confirmed';
    // Confirmed by another finalizer, or gone: no token to sign again, whatever the version.
    return row.secrets_current || !row.open ? 'not-confirmed' : 'secrets-changed';
  }

  private async one(sql: string, params: unknown[]): Promise<Payment | null> {
    const [row] = await this.db.sql.query<PaymentRow>(sql, params);
    return row ? paymentFromRow(row) : null;
  }
}

/** A payments row as raw SQL returns it (bigints as strings on pg, bigints on PGlite). */
interface PaymentRow {
  id: string;
  gate_id: string;
  gate_id_sha256: string | null;
  site_id: string;
  publisher_id: string;
  url: string;
  method: Payment['method'];
  status: Payment['status'];
  chain_id: number;
  asset: string;
  payer: string;
  pay_to: string;
  amount: string | bigint;
  nonce: string | null;
  tx_hash: string | null;
  replaced_tx_hashes: string[] | null;
  tx_sent_at: Date | string | null;
  transfer_log_index: number | null;
  block_number: string | bigint | null;
  authorization: Prisma.JsonValue | string | null;
  token_kid: string | null;
  token_issued_at: Date | string | null;
  token_expires_at: Date | string | null;
  created_at: Date | string;
  confirmed_at: Date | string | null;
  checked_at: Date | string | null;
  payment_identifier: string | null;
  payment_fingerprint: string | null;
  channel_id: string | null;
  cumulative_amount: string | bigint | null;
}

/** The row as Prisma would have given it. */
function paymentFromRow(row: PaymentRow): Payment {
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  const big = (value: string | bigint | null) => (value === null ? null : BigInt(value));
  return {
    id: row.id,
    gateId: row.gate_id,
    gateIdSha256: row.gate_id_sha256,
    siteId: row.site_id,
    publisherId: row.publisher_id,
    url: row.url,
    method: row.method,
    status: row.status,
    chainId: Number(row.chain_id),
    asset: row.asset,
    payer: row.payer,
    payTo: row.pay_to,
    amount: BigInt(row.amount),
    nonce: row.nonce,
    txHash: row.tx_hash,
    replacedTxHashes: row.replaced_tx_hashes ?? [],
    txSentAt: date(row.tx_sent_at),
    transferLogIndex: row.transfer_log_index,
    blockNumber: big(row.block_number),
    authorization: typeof row.authorization === 'string' ? JSON.parse(row.authorization) : row.authorization,
    tokenKid: row.token_kid,
    tokenIssuedAt: date(row.token_issued_at),
    tokenExpiresAt: date(row.token_expires_at),
    createdAt: new Date(row.created_at),
    confirmedAt: date(row.confirmed_at),
    checkedAt: date(row.checked_at),
    paymentIdentifier: row.payment_identifier,
    paymentFingerprint: row.payment_fingerprint,
    channelId: row.channel_id,
    cumulativeAmount: big(row.cumulative_amount),
  };
}
