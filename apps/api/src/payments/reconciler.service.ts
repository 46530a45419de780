import { Inject, Injectable, Logger } from '@nestjs/common';
import { USDC_ABI, type TransferAuthorization } from '@crawlgate/core';
import type { Block, Hash, TransactionReceipt } from 'viem';
import { hasCode } from '../chain/account-code';
import { confirmedBlockNow, firstRecentBlock, hasConfirmationsNow, type ChainContext } from '../chain/chain-context';
import { logRepricing, ReplacementNotRecorded, repriceIfStuck } from '../chain/fee-bump';
import { eventsInSpans } from '../chain/log-spans';
import { CHAIN } from '../chain/tokens';
import { notFoundAsNull, ownReceipt } from '../chain/transaction-state';
import { JOB_LOCKS, whileHoldingLock } from '../db/advisory-lock';
import type { Database } from '../db/database';
import type { AppConfig } from '../config/config';
import { CONFIG, DATABASE } from '../db/tokens';
import type { Payment } from '../generated/prisma/client';
import {
  authorizationOutcome,
  earliestAcceptanceOf,
  firstBlockStampedFrom,
  isCanceledWithin,
  settledTransferIndex,
  unusedAuthorizationFate,
  usedNonceIn,
} from './authorization-checks';
import { sendSettlement } from './settlement';
import { movedTransfers, recordedStillAt, transfersTaken } from './transfer-checks';
import { authorizationSettledIn, deserializeAuthorization, PaymentsService } from './payments.service';
import { isOwnHash, ownHashes } from './payment-hashes';
import { PaymentStore } from './payment.store';
import { RelayRefusalsStore } from './relay-refusals.store';
import { outlastsSettlement, payeeStands } from '../gates/gates.service';
import { SitePaymentTermsStore } from '../sites/site-payment-terms.store';
import { SiteSecretsService } from '../sites/site-secrets.service';

/** Open payments looked at per pass; the least recently checked first, so none waits behind stuck ones. */
const BATCH = 100;

export interface ReconcileReport {
  finalized: number;
  released: number;
  resubmitted: number;
  waiting: number;
  /** Another instance held the lock, so this one did nothing. */
  skipped: boolean;
}

/**
 * Finishes settlements their request did not: a timeout answered 202, or the process died after
 * claiming the gate. The token is the ground truth: if the authorization's nonce is used, the
 * transfer happened (find it and record it); if not, submit it again while it is still valid
 * (EIP-3009 nonces make a second charge impossible), else release the gate.
 */
@Injectable()
export class ReconcilerService {
  private readonly logger = new Logger('Reconciler');

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CHAIN) private readonly chain: ChainContext,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly payments: PaymentsService,
    private readonly secrets: SiteSecretsService,
    private readonly siteTerms: SitePaymentTermsStore,
    private readonly store: PaymentStore,
    private readonly relayRefusals: RelayRefusalsStore,
  ) {}

  /** One pass over unfinished settlements; with several API instances, only one reconciles at a time. */
  async runOnce(): Promise<ReconcileReport> {
    const report = await whileHoldingLock(this.db, JOB_LOCKS.reconciler, () => this.reconcileOpenPayments());
    return report ?? { finalized: 0, released: 0, resubmitted: 0, waiting: 0, skipped: true };
  }

  private async reconcileOpenPayments(): Promise<ReconcileReport> {
    const report: ReconcileReport = { finalized: 0, released: 0, resubmitted: 0, waiting: 0, skipped: false };
    // A row without a hash may belong to a request that is broadcasting right now: give it time.
    const open = await this.store.openForReconciliation(Math.max(2_000, this.chain.settlementTimeoutMs), BATCH);
    for (const payment of open) {
      try {
        report[await this.reconcile(payment)] += 1;
      } catch (error) {
        report.waiting += 1;
        this.logger.warn(`Payment ${payment.id} stays open for now: ${(error as Error).message}`);
      }
    }
    return report;
  }

  private async reconcile(payment: Payment): Promise<'finalized' | 'released' | 'resubmitted' | 'waiting'> {
    // Our transaction for it was mined and reverted: not sent again (a payer who can make it revert
    // at will, a smart wallet whose signature check flips, would have the relayer pay gas each
    // pass), only watched until someone's copy lands or the chain is past its end.
    let reverted = false;
    if (payment.txHash) {
      // Any hash broadcast for it: a re-priced transaction's original may be the one mined.
      const receipt = await this.ownMinedReceipt(payment);
      reverted = receipt?.status === 'reverted';
      if (receipt?.status === 'success') {
        if (!(await hasConfirmationsNow(this.chain, receipt))) return 'waiting';
        // After a reorg, a transfer proof's claim and another's may both name its one Transfer: the
        // request that made it deletes it (transfersStillHold), never confirmed here meanwhile.
        if (!(await this.payments.transfersHold(payment.chainId, receipt, payment.id))) return 'waiting';
        await this.payments.finalize(payment.id, receipt);
        return 'finalized';
      }
      const pending = receipt ? null : await this.pendingOwnHash(payment);
      if (pending) {
        if (payment.method === 'authorization') await this.repriceSettlementIfStuck(payment, pending);
        return 'waiting';
      }
      if (payment.method === 'transfer') return 'waiting';
    }
    if (!payment.authorization || !payment.nonce) return 'waiting';
    const auth = deserializeAuthorization(payment.authorization);
    // The newest block with the chain's confirmations first, the authorization's state as of it:
    // unused there and expired by its stamp, it can never land. A newer block may be a fork's that a
    // reorg undoes, stamped past the authorization's end while ours holds its settlement.
    const head = await this.confirmedHead();
    const outcome = await authorizationOutcome(this.chain, auth.from, auth.nonce, head.number);
    // Ours reverted, the nonce not spent by another's copy (read at the newest block: a copy mined
    // after the confirmed head made ours revert too): the payer made it revert (or could have).
    if (reverted && (await authorizationOutcome(this.chain, auth.from, auth.nonce)) !== 'used')
      await this.relayRefusals.refuse(payment.chainId, auth.from, payment.txHash!);
    let life: Promise<BlockSpan> | undefined;
    const lifeOnce = () => (life ??= this.lifeOf(auth, head.number));
    const receipt = outcome === 'used' ? await this.findSettlement(auth, lifeOnce) : null;
    // Spent, and used in none of the blocks it could have been: a cancel the recent blocks do not
    // hold (the reconciler away longer than they reach) is searched for before them, or the claim
    // would wait for a settlement that never comes.
    if (
      outcome === 'canceled' ||
      (outcome === 'used' && !receipt && (await this.canceledBeforeRecent(auth, head.number, lifeOnce)))
    ) {
      await this.payments.release(payment.id);
      this.logger.log(`Released gate ${payment.gateId}: its payer canceled the authorization, nothing was charged`);
      return 'released';
    }
    if (outcome === 'used') {
      if (!receipt || !(await hasConfirmationsNow(this.chain, receipt))) return 'waiting';
      // A transaction that used the nonce succeeded and says so in its logs: a receipt that does not
      // (reverted, or without the event the log search found, from a node that lies or lags) is
      // waited on, never read as the nonce spent elsewhere, which would release a paid claim.
      if (!usedNonceIn(this.chain, receipt, auth)) return 'waiting';
      const index = settledTransferIndex(this.chain, receipt, auth);
      if (index === null) {
        // The payer spent the nonce on another authorization of its own: this one never settles.
        await this.payments.release(payment.id);
        this.logger.warn(
          `Released gate ${payment.gateId}: its authorization's nonce was used by another transfer (${receipt.transactionHash}); nothing was paid`,
        );
        return 'released';
      }
      // Its payer sent it and named that transfer for another gate (a copy claimed this one
      // meanwhile): that gate is paid; this claim is not, and nothing of its own was charged. Only a
      // payment still at this Transfer says so: one a reorg moved is found elsewhere, this claim's own first.
      const others = (await this.store.byTransaction(payment.chainId, receipt.transactionHash.toLowerCase())).filter(
        (other) => other.id !== payment.id && other.transferLogIndex !== null,
      );
      const settledBy = authorizationSettledIn(this.chain, receipt);
      const paidElsewhere = recordedStillAt(receipt, others, index, settledBy);
      if (paidElsewhere) {
        await this.payments.release(payment.id);
        this.logger.warn(
          `Released gate ${payment.gateId}: its authorization's transfer paid gate ${paidElsewhere.gateId}, which its payer named`,
        );
        return 'released';
      }
      // Its own Transfer is where its nonce was used (settledBy: `index`), reserved before the others are matched.
      const own = { ...payment, transferLogIndex: index };
      const taken = transfersTaken(receipt, [own, ...others], settledBy);
      if (taken === 'changed') {
        this.logger.error(
          `Gate ${payment.gateId} stays open: ${receipt.transactionHash} no longer holds every transfer recorded for it (the chain reorganized); nothing is finalized from it`,
        );
        return 'waiting';
      }
      if (!(await this.heldLongEnough(payment, receipt, head.timestamp))) return 'waiting';
      // Others recorded where a reorg moved them from: moved first, or this one's index would meet a stale one.
      await this.store.moveTransferIndexes(movedTransfers(taken));
      await this.payments.finalize(payment.id, receipt);
      return 'finalized';
    }
    // Not released while the authorization could still land: a broadcast this row never recorded
    // (a crash right after sending) may be pending. Released once the chain is past its end.
    const fate = unusedAuthorizationFate(auth.validBefore, head.timestamp, BigInt(Math.floor(Date.now() / 1000)));
    if (fate === 'wait' || (fate === 'send' && reverted)) return 'waiting';
    if (fate === 'send' && !(await this.gateSecretOutlastsSettlement(payment))) {
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: the secret that signed the gate no longer outlasts it; released once its authorization expires`,
      );
      return 'waiting';
    }
    if (fate === 'send' && !payeeStands(await this.siteTerms.get(payment.siteId), payment.payTo, this.chain)) {
      // As a request would be refused (assertPayeeStands): the replaced wallet may be the lost one.
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: its publisher replaced the payout address it pays; released once its authorization expires`,
      );
      return 'waiting';
    }
    if (fate === 'send' && (await this.relayRefusals.isRefused(payment.chainId, auth.from))) {
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: its payer is not relayed (a transaction sent for it reverted); released once its authorization expires`,
      );
      return 'waiting';
    }
    // Every other claim of the payer in flight counts: which of those its request, or theirs, counted
    // as written first is unknown here, so none is taken as behind it.
    const others = fate === 'send' ? await this.store.othersInFlight(payment) : [];
    if (others.some((other) => other.nonce === payment.nonce)) {
      // A deposit the relayer sends for the payer spends this very authorization: one of the two reverts.
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: a deposit of its payer on its way spends the same authorization; released once it expires`,
      );
      return 'waiting';
    }
    if (others.length > 0 && (await hasCode(this.chain.publicClient, auth.from))) {
      // As a request would be answered (contractPayerInTurn): a contract wallet's signature check can
      // pass every check and fail on chain, so its settlements go one at a time, at most one reverting.
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: its payer is a contract wallet with another settlement in flight; sent once that one is settled, else released once its authorization expires`,
      );
      return 'waiting';
    }
    const coverage = fate === 'send' ? await this.payments.payerCoverage(payment, others) : undefined;
    if (coverage === 'short') {
      // As a request would be refused (payerCoverage), though its request may still be running: one
      // slower than the claim age leaves its claim here, and the payer's other settlement may be on
      // its way. Sent by a later pass if its money is still there then.
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: its payer's USDC, less its other settlements in flight, does not cover it; released once its authorization expires`,
      );
      return 'waiting';
    }
    if (coverage === 'spent') {
      // Used in a block newer than the confirmed head: a later pass finds that transfer.
      this.logger.log(
        `Not sending the settlement of gate ${payment.gateId}: its authorization was just used by another transaction, looked for again once that is as deep as the confirmations`,
      );
      return 'waiting';
    }
    if (fate === 'send') {
      // Recorded before it is sent (a stuck request then finds it sent), and sent only if nobody
      // changed the claim since it was judged: its request neither finished, released nor took it
      // for its own broadcast meanwhile (then one of the two copies would revert, at our gas).
      let seen = payment.txHash;
      const hash = await sendSettlement(this.chain, auth, async (signed) => {
        // In the broadcast turn, behind any other: a hash judged unknown may have reached the node
        // since (its request's send slower than the claim wait), and then it is the settlement.
        if (seen && (await this.pendingOwnHash({ ...payment, txHash: seen }))) throw new ClaimSettled();
        if (!(await this.store.markResubmitted(payment.id, seen, signed))) throw new ClaimSettled();
        seen = signed;
      }).catch((error: unknown) => {
        if (error instanceof ClaimSettled) return null;
        throw error;
      });
      if (!hash) return 'waiting';
      this.logger.log(`Resubmitted the settlement of gate ${payment.gateId}: ${hash}`);
      return 'resubmitted';
    }
    await this.payments.release(payment.id);
    this.logger.log(`Released gate ${payment.gateId}: its authorization expired unsettled, nothing was charged`);
    return 'released';
  }

  /**
   * Nothing is sent for a claim whose gate's secret no longer verifies, or retires before the
   * payment could settle: its token would be signed with another secret, which the middleware that
   * minted the gate does not hold. Claims that name no secret are signed with the current one.
   */
  private async gateSecretOutlastsSettlement(payment: Payment): Promise<boolean> {
    if (!payment.tokenKid) return true;
    const secret = (await this.secrets.usable(payment.siteId)).find((usable) => usable.kid === payment.tokenKid);
    return secret !== undefined && outlastsSettlement(secret.retiresAt, this.chain.settlementTimeoutMs);
  }

  /**
   * Our own transaction pays its claim at once; another's (a copy of the authorization sent ahead of
   * ours, or the payer's own relay) only foreignSettlementHoldSeconds of chain time after its block.
   * A payer who sent its authorization itself, public in the mempool from then, names its transfer
   * for its own gate meanwhile (tx_hash and its signature): a stranger who posted that authorization
   * to a gate of its own at the same price and pay_to is not paid with it first.
   */
  private async heldLongEnough(payment: Payment, receipt: TransactionReceipt, now: bigint): Promise<boolean> {
    if (isOwnHash(payment, receipt.transactionHash)) return true;
    const block = await this.chain.publicClient.getBlock({ blockNumber: receipt.blockNumber });
    return now >= block.timestamp + BigInt(this.config.chain.foreignSettlementHoldSeconds);
  }

  /**
   * The receipt of a hash broadcast for the payment's settlement that was mined, if one was: a
   * successful one first (one sent again at a later nonce may have reverted behind it).
   */
  private async ownMinedReceipt(payment: Payment): Promise<TransactionReceipt | null> {
    let mined: TransactionReceipt | null = null;
    for (const hash of ownHashes(payment)) {
      const receipt = await this.receipt(hash);
      if (receipt?.status === 'success') return receipt;
      mined ??= receipt;
    }
    return mined;
  }

  /** A hash broadcast for the payment's settlement that the node holds pending, if any. */
  private async pendingOwnHash(payment: Payment): Promise<Hash | null> {
    for (const hash of ownHashes(payment)) if (await this.isPending(hash)) return hash;
    return null;
  }

  /**
   * Re-prices the payment's pending settlement once stuck under the chain's fees (repriceIfStuck);
   * at the maximum fee it is left to wait, with a warning. The new hash is recorded before it is
   * sent, the replaced one kept, and only while the payment still has the hash judged here.
   */
  private async repriceSettlementIfStuck(payment: Payment, pending: Hash): Promise<void> {
    const repricing = await repriceIfStuck(
      this.chain,
      pending,
      payment.txSentAt ?? payment.createdAt,
      async (signed) => {
        if (!(await this.store.recordReplacement(payment.id, payment.txHash!, signed)))
          throw new ReplacementNotRecorded();
      },
    );
    logRepricing(this.logger, `the settlement of gate ${payment.gateId}`, pending, repricing);
  }

  private async receipt(hash: Hash): Promise<TransactionReceipt | null> {
    return ownReceipt(hash, await this.chain.publicClient.getTransactionReceipt({ hash }).catch(notFoundAsNull));
  }

  private async isPending(hash: Hash): Promise<boolean> {
    return (await this.chain.publicClient.getTransaction({ hash }).catch(notFoundAsNull)) !== null;
  }

  private async confirmedHead(): Promise<Block<bigint, false, 'latest'>> {
    return this.chain.publicClient.getBlock({ blockNumber: await confirmedBlockNow(this.chain) });
  }

  /**
   * The blocks an authorization's nonce can have been spent in, by its use or its cancel: from the
   * first stamped when the API can have accepted it (the nonce unused then) to the first stamped at
   * its validBefore, after which the token takes no use and a cancel changes nothing; up to `head`.
   */
  private async lifeOf(auth: Pick<TransferAuthorization, 'validBefore'>, head: bigint): Promise<BlockSpan> {
    return {
      first: await firstBlockStampedFrom(this.chain, earliestAcceptanceOf(auth), head),
      last: await firstBlockStampedFrom(this.chain, auth.validBefore, head),
    };
  }

  /**
   * The transaction that used the authorization's (from, nonce), found by the token's
   * AuthorizationUsed event: in the recent blocks, else (the reconciler was away longer than they
   * last) in the blocks of its life before them (`life`, read once a pass when needed): a validAfter
   * of 0 would have the search start at genesis.
   */
  private async findSettlement(
    auth: Pick<TransferAuthorization, 'from' | 'nonce'>,
    life: () => Promise<BlockSpan>,
  ): Promise<TransactionReceipt | null> {
    const head = await this.chain.publicClient.getBlockNumber({ cacheTime: 0 });
    const recent = firstRecentBlock(this.chain, head);
    const used = (from: bigint, to: bigint) =>
      eventsInSpans(this.chain.logSpan, from, to, (fromBlock, toBlock) =>
        this.chain.publicClient.getContractEvents({
          address: this.chain.usdc,
          abi: USDC_ABI,
          eventName: 'AuthorizationUsed',
          args: { authorizer: auth.from, nonce: auth.nonce },
          fromBlock,
          toBlock,
        }),
      );
    let [log] = await used(recent, head);
    if (!log && recent > 0n) {
      const older = partBefore(await life(), recent);
      if (older) [log] = await used(older.first, older.last);
    }
    return log ? this.receipt(log.transactionHash) : null;
  }

  /**
   * Whether the token's AuthorizationCanceled for the authorization is in a block of its life
   * before the recent blocks authorizationOutcome searched up to `confirmedHead`.
   */
  private async canceledBeforeRecent(
    auth: Pick<TransferAuthorization, 'from' | 'nonce'>,
    confirmedHead: bigint,
    life: () => Promise<BlockSpan>,
  ): Promise<boolean> {
    const recent = firstRecentBlock(this.chain, confirmedHead);
    if (recent === 0n) return false;
    const older = partBefore(await life(), recent);
    return older !== null && (await isCanceledWithin(this.chain, auth.from, auth.nonce, older.first, older.last));
  }
}

/** A range of blocks, both ends included. */
interface BlockSpan {
  first: bigint;
  last: bigint;
}

/** The blocks of `span` before `block`, or null when none is. */
function partBefore(span: BlockSpan, block: bigint): BlockSpan | null {
  if (span.first >= block) return null;
  return { first: span.first, last: span.last < block ? span.last : block - 1n };
}

/** The claim was confirmed, released or taken while its settlement was being prepared: nothing is sent. */
class ClaimSettled extends Error {}
