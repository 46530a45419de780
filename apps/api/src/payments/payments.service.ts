import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  formatMicrosUsd,
  isBatchSettlementPayment,
  parsePaymentPayload,
  readPaymentIdentifier,
  X402_REASONS,
} from '@crawlgate/core';
import { isAddressEqual, type Hash, type Hex, type TransactionReceipt } from 'viem';
import { AccessTokenService, type IssuedToken } from '../access-tokens/access-token.service';
import { VoucherPaymentsService } from '../batch-settlement/voucher-payments.service';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import { notFoundAsNull } from '../chain/transaction-state';
import { isUniqueViolation } from '../db/prisma-errors';
import {
  assertPayeeStands,
  assertPaysNoOwnAddress,
  assertSecretOutlastsSettlement,
  gatePaymentFields,
  gateSiteTerms,
  isPaymentOfGate,
  outlastsSettlement,
  paidSiteGone,
  payeeStands,
  siteGoneAs410,
  GatesService,
  GATE_NOT_FOUND,
  termsKeptChanging,
  TERMS_ATTEMPTS,
  transferToReplacedPayee,
  type Gate,
} from '../gates/gates.service';
import type { Payment, Prisma } from '../generated/prisma/client';
import { PayoutAddressStore } from '../publishers/payout-address.store';
import { conflict, notCharged, notFound, unavailable } from '../http/api-error';
import { ValidationFailed } from '../http/validation-items';
import {
  authorizationOutcome,
  authorizationsUsedIn,
  checkSignature,
  checkTerms,
  estimateRefusal,
  isAuthorizationUsed,
  settledTransferIndex,
  simulateSettlement,
  toSignedAuthorization,
  type SignedAuthorization,
} from './authorization-checks';
import { failedBroadcast, isChainUnreachable, nothingSentAnswer, onChain } from './chain-errors';
import { paymentFingerprint, sameFingerprint } from './payment-fingerprint';
import { isOwnHash } from './payment-hashes';
import { PaymentRejected, RELAY_REASONS } from './payment-rejected';
import { RelayRefusalsStore } from './relay-refusals.store';
import type { PaidView, PendingView, RefundedView, VerifyPaymentDto } from './payments.dto';
import { broadcastFromRelayer, prepareSettlement, waitForReceipt, type RelayerCall } from './settlement';
import {
  checkPayerSignature,
  checkTransfer,
  transferIndexOf,
  transferSignedFor,
  movedTransfers,
  transfersTaken,
} from './transfer-checks';
import { PaymentStore, PayerTurnBusy, PaymentTermsChanged, type ClaimAhead } from './payment.store';
import { NoCurrentSecret, SiteSecretsService } from '../sites/site-secrets.service';
import { hasCode } from '../chain/account-code';
import { PricingService } from '../pricing/pricing.service';
import { SitePaymentTermsStore } from '../sites/site-payment-terms.store';
import { SimulationBudget } from './simulation-budget';
import { MAX_PAYER_SETTLEMENTS_IN_FLIGHT, payerCoverageNow, type Coverage } from './payer-balance';

export type VerifyOutcome =
  | { kind: 'paid'; body: PaidView }
  | { kind: 'pending'; body: PendingView }
  /** x402's batch-settlement refund payload: nothing paid, the channel's rest returned. */
  | { kind: 'refunded'; body: RefundedView };

/**
 * Verifies a proof of payment for a gate and, for an authorization, settles it on chain before
 * answering: settle first, then serve. A gate is a signed offer with no row: its payment row is
 * the only state. One proof pays one gate and one gate takes one proof (unique nonce, unique tx
 * hash and Transfer log index, unique gate ref), so the claim is a single insert; a repeated proof for the same gate gets the
 * stored result back instead of a second transfer, and for any other gate 409. Only the holder of
 * the gate's id (the visitor it was offered to) can ask: public data (histories, calldata) never
 * names it.
 */
@Injectable()
export class PaymentsService {
  private readonly logger = new Logger('Payments');

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly gates: GatesService,
    private readonly tokens: AccessTokenService,
    private readonly vouchers: VoucherPaymentsService,
    private readonly store: PaymentStore,
    private readonly relayRefusals: RelayRefusalsStore,
    private readonly pricing: PricingService,
    private readonly sites: SitePaymentTermsStore,
    private readonly payouts: PayoutAddressStore,
    private readonly simulations: SimulationBudget,
    private readonly secrets: SiteSecretsService,
  ) {}

  async verify(gateId: string, body: VerifyPaymentDto): Promise<VerifyOutcome> {
    if ((body.payment === undefined) === (body.tx_hash === undefined)) {
      throw new ValidationFailed([
        {
          loc: ['body'],
          msg: 'Send exactly one of `payment` (x402 payload) or `tx_hash`',
          type: 'value_error',
          // The fields sent, not their values: a signed payment is not echoed back.
          input: Object.keys(body).filter((key) => (body as Record<string, unknown>)[key] !== undefined),
        },
      ]);
    }
    const voucher = body.payment !== undefined && isBatchSettlementPayment(body.payment);
    if (body.recorded_only === true && body.payment === undefined) {
      throw new ValidationFailed([
        {
          loc: ['body', 'recorded_only'],
          msg: '`recorded_only` goes with a `payment` (an EIP-3009 authorization or a voucher) only',
          type: 'value_error',
          input: true,
        },
      ]);
    }
    // A voucher's own reads need not wait for the gate's: they go out with them (readAhead).
    const ahead = voucher ? this.vouchers.readAhead(gateId, body.payment) : undefined;
    const { gate, payment, site } = await this.gates.findLive(gateId, { transferProof: body.tx_hash !== undefined });
    // Before anything is simulated or charged, a transfer proof included (one to the deposit
    // collector is any depositor's own deposit): a payment already recorded is still answered.
    // Vouchers are judged in their service, where a refund (paying nothing) is let through.
    if (!voucher && !payment) assertPaysNoOwnAddress(gate, this.chain);
    if (voucher) return this.vouchers.verify(gate, payment, site, body.payment!, body.recorded_only === true, ahead);
    return body.payment !== undefined
      ? this.verifyAuthorization(gate, payment, body.payment, body.recorded_only === true)
      : this.verifyTransfer(
          gate,
          payment,
          body.tx_hash!.toLowerCase() as Hash,
          body.signature as Hex | undefined,
          body.payer?.toLowerCase() as Hex | undefined,
        );
  }

  /** `recordedOnly`: answer for this authorization's payment of this gate if one is recorded; never start one. */
  private async verifyAuthorization(
    gate: Gate,
    gatePayment: Payment | null,
    raw: unknown,
    recordedOnly: boolean,
  ): Promise<VerifyOutcome> {
    const parsed = parsePaymentPayload(raw);
    if (!parsed.ok) throw new PaymentRejected(parsed.reason, parsed.msg);
    const auth = toSignedAuthorization(parsed.payload);
    const payer = auth.from.toLowerCase();
    const identifier = this.identifierOf(gate, raw);

    // The authorization first: once settled it is public (the transaction's calldata), and whoever
    // posts it must get the same answer whatever id it names, or the answers would tell which id
    // its payer used. The id then speaks only for an authorization not taken yet.
    const nonceKey = { chainId: gate.chainId, asset: gate.asset, payer, nonce: auth.nonce };
    const existing = await this.store.byNonce(nonceKey);
    if (existing) return this.outcomeOf(existing, gate);
    if (identifier) {
      // Only this very payment gets its stored answer here. Another under the id goes through every
      // check a new payment does, and the claim's key refuses it (409): answered sooner, a payment
      // forged in the payer's name would tell whether the payer used that id on the site.
      const kept = await this.store.byIdentifier({ siteId: gate.siteId, payer, paymentIdentifier: identifier.id });
      if (kept && isThisPayment(kept, gate, identifier.fingerprint)) return this.outcomeOf(kept, gate);
    }
    if (recordedOnly)
      throw new PaymentRejected(
        X402_REASONS.invalid_payload,
        'No payment of this gate with this authorization is recorded, and recorded_only starts none; nothing was charged',
      );
    let claim: Awaited<ReturnType<PaymentsService['claim']>>;
    let prepared: ReturnType<typeof prepareSettlement> | undefined; // set when claimed
    try {
      assertPayable(gatePayment);

      checkTerms(gate, this.chain, parsed.scheme, parsed.network, auth, BigInt(Math.floor(Date.now() / 1000)));
      await this.simulations.assertMaySimulate(gate, auth);
      const refused = this.relayRefusals.isRefused(gate.chainId, payer);
      refused.catch(() => undefined); // awaited below, after the simulation it runs beside
      // The simulation is the signature check: the token verifies it (ECDSA or ERC-1271) as it will on
      // settlement. Recovering it here too cost more CPU than any other step of a payment.
      // Every simulation that fails counts, a timeout or a node's refusal as much as the token's (a
      // smart wallet's signature check can be made to run until the call times out), but not one
      // whose connection to the node never opened.
      await this.simulations.simulating(gate.siteId, payer, () => simulateSettlement(this.chain, auth));
      if (await refused) {
        await this.simulations.countRefused(gate.siteId);
        throw new PaymentRejected(
          RELAY_REASONS.refused,
          'A transaction our relayer sent for this payer reverted on chain lately, so its authorizations are not relayed for 24 hours; nothing was charged. Pay with a transfer of your own (tx_hash)',
        );
      }
      // Gas and fees are estimated while the claim is written and the balance read, and used only if
      // both let the settlement go. An estimate that failed meanwhile is made again when sending, as
      // it always was, so its failure is judged there and then.
      prepared = prepareSettlement(this.chain, auth);
      prepared.catch(() => undefined);

      claim = await this.claim(gate, {
        method: 'authorization',
        status: 'submitting',
        payer,
        nonce: auth.nonce,
        authorization: serializeAuthorization(auth),
        paymentIdentifier: identifier?.id ?? null,
        paymentFingerprint: identifier?.fingerprint ?? null,
      });
    } catch (error) {
      // Refused after the authorization was read as not taken (above): its twin (the same
      // authorization sent again at once, a front's retry) may have taken it since. Its answer then,
      // as the twin got it: a payer told "refused" would pay anew for a page it paid.
      const twin = await this.store.byNonce(nonceKey).catch(() => null);
      if (!twin || !isPaymentOfGate(twin, gate)) throw error;
      claim = { kind: 'taken', payment: twin };
    }
    if (claim.kind === 'taken')
      return identifier
        ? this.answerForIdentifier(claim.payment, gate, identifier.fingerprint, auth)
        : this.outcomeOf(claim.payment, gate);
    // Nothing is broadcast yet: a claim the balance cannot cover, or a chain that cannot tell, is
    // released, unless the reconciler sent it meanwhile; then its outcome is the answer. One whose
    // authorization was spent meanwhile is kept (spentBeforeSent).
    let coverage: Coverage;
    try {
      // Each authorization once: a deposit in flight is its lease and each hash sent for it.
      if (new Set(claim.ahead.map((one) => one.nonce)).size >= MAX_PAYER_SETTLEMENTS_IN_FLIGHT)
        throw payerInFlightFull();
      // Only a deposit of the payer can be ahead with this authorization's nonce (a claim's is unique):
      // one of the two would revert at our gas, and nobody be refused for it.
      if (claim.ahead.some((one) => one.nonce === claim.payment.nonce)) throw nonceOfADepositInFlight();
      // Read only when others of the payer are in flight: a payment alone costs no call more.
      if (claim.ahead.length > 0 && (await onChain(() => hasCode(this.chain.publicClient, auth.from))))
        throw contractPayerInTurn();
      coverage = await this.payerCoverage(claim.payment, claim.ahead);
      // The claim held the site's terms only until it was written: a site deleted, or a payout
      // replaced, since then pays nobody (the replaced wallet may be the lost one), as the
      // reconciler would send nothing for it. A spent claim sends nothing either way: it is kept.
      if (coverage !== 'spent') assertPayeeStands(await gateSiteTerms(this.sites, gate), gate, this.chain);
    } catch (error) {
      if (await this.store.releaseUnsent(claim.payment.id)) throw error;
      return this.outcomeOf(claim.payment, gate);
    }
    // Spent since its simulation: a copy of it mined may have paid this gate, which the claim keeps
    // for the reconciler to find (as when a copy beats our broadcast); nothing of ours is sent.
    if (coverage === 'spent') return this.spentBeforeSent(claim.payment, gate);
    if (coverage === 'short') {
      if (!(await this.store.releaseUnsent(claim.payment.id))) return this.outcomeOf(claim.payment, gate);
      throw new PaymentRejected(
        X402_REASONS.insufficient_funds,
        'The payer’s USDC, less what its other payments in flight will take, does not cover this one; nothing was charged',
      );
    }

    let hash: Hash;
    // The hash this request took the claim for, just before sending it (in its broadcast turn): the
    // reconciler may have taken it first, while this request waited for its turn or its nonce.
    let recorded: Hash | null = null;
    let call: RelayerCall;
    try {
      call = await prepared!.catch(() => prepareSettlement(this.chain, auth));
    } catch (error) {
      // Nothing was signed: the gas estimate runs the transfer, and it failed (the payer's funds or
      // nonce changed since its checks), or the node did not run it. The gate is freed, never left
      // to answer 202 for a settlement that was never sent, unless the authorization was spent
      // meanwhile (or that cannot be read): a copy of it mined may have paid this gate, which the
      // claim keeps for the reconciler to find, as when a copy beats our broadcast.
      const refusal = estimateRefusal(error);
      // The estimate's own revert says so too: the read after it may come from a node behind it.
      const spent =
        (refusal instanceof PaymentRejected && refusal.reason === X402_REASONS.invalid_exact_evm_nonce_already_used) ||
        (await isAuthorizationUsed(this.chain, auth.from, auth.nonce).catch(() => null)) !== false;
      if (spent) return this.spentBeforeSent(claim.payment, gate);
      if (!(await this.store.releaseUnsent(claim.payment.id))) return this.outcomeOf(claim.payment, gate);
      throw refusal;
    }
    try {
      hash = await broadcastFromRelayer(this.chain, call, { payee: auth.to }, async (signed) => {
        if (!(await this.store.takeForBroadcast(claim.payment.id, recorded, signed))) throw new ClaimTaken();
        recorded = signed;
      });
    } catch (error) {
      if (error instanceof ClaimTaken) return this.settledElsewhere(claim.payment, gate, auth);
      const unsent = nothingSentAnswer(error);
      if (unsent) {
        // Nothing reached the chain (unreachable, or its fees above the cap): free the gate so the agent can retry.
        if (!(await this.store.releaseUnsent(claim.payment.id, recorded))) return this.outcomeOf(claim.payment, gate);
        throw unsent;
      }
      // The node may or may not have taken the transaction: the claim keeps its hash, and the
      // reconciler records it once mined, or asks the token (and sends it again) if it never was.
      const sent = failedBroadcast(error)?.hash ?? null;
      if (sent) await this.store.markSubmitted(claim.payment.id, sent);
      this.logger.warn(
        `Settlement of gate ${gate.ref} ended ambiguously; the reconciler will finish it: ${(error as Error).message}`,
      );
      return pending(gate.id, sent);
    }
    await this.store.markSubmitted(claim.payment.id, hash);
    return this.awaitSettlement({ ...claim.payment, status: 'submitted', txHash: hash }, gate.id, hash, auth);
  }

  /**
   * The answer for a claim whose authorization was spent before this request sent it: 202 while it
   * is kept for the reconciler to find the transfer that spent it; the outcome of the reconciler's
   * own broadcast, if it took the claim meanwhile (a request slower than the claim's wait).
   */
  private async spentBeforeSent(claim: Payment, gate: Gate): Promise<VerifyOutcome> {
    const now = await this.store.byId(claim.id);
    return now && !now.txHash ? pending(gate.id, null) : this.outcomeOf(now ?? claim, gate);
  }

  /**
   * The answer for a claim the reconciler took for its broadcast while this request waited for its
   * own: its transaction awaited as this request's would have been, or the claim's outcome.
   */
  private async settledElsewhere(claim: Payment, gate: Gate, auth: SignedAuthorization): Promise<VerifyOutcome> {
    const taken = await this.store.byId(claim.id);
    if (taken?.status === 'submitted' && taken.txHash)
      return this.awaitSettlement(taken, gate.id, taken.txHash as Hash, auth);
    return this.outcomeOf(taken ?? claim, gate);
  }

  /** The payment's x402 payment-identifier with the fingerprint it is compared by; null without one. */
  private identifierOf(gate: Gate, raw: unknown): { id: string; fingerprint: string } | null {
    const read = readPaymentIdentifier(raw);
    if (!read.ok) throw new PaymentRejected(X402_REASONS.invalid_payload, `Bad payment-identifier: ${read.msg}`);
    return read.id === null ? null : { id: read.id, fingerprint: paymentFingerprint(gate.ref, raw) };
  }

  /**
   * The answer for an id this payer already used on this site: the stored one for the same payment
   * to the same gate, else 409. The 409 goes only to whoever signed this payment as the payer, so
   * posing as a payer with its id learns nothing (the signature check refuses it first).
   */
  private async answerForIdentifier(
    kept: Payment,
    gate: Gate,
    fingerprint: string,
    auth: SignedAuthorization,
  ): Promise<VerifyOutcome> {
    if (isThisPayment(kept, gate, fingerprint)) return this.outcomeOf(kept, gate);
    await checkSignature(this.chain, auth);
    throw conflict(
      'This payment identifier was already used with another payment; send a new id with a new payment, or the same payment again for its answer',
    );
  }

  /**
   * `signature`: the payer's over this gate and hash, checked before anything is recorded or given
   * back. A transaction pays one gate per Transfer: a relay may carry several payers' transfers.
   */
  private async verifyTransfer(
    gate: Gate,
    gatePayment: Payment | null,
    hash: Hash,
    signature: Hex | undefined,
    named?: Hex,
  ): Promise<VerifyOutcome> {
    const recorded = await this.store.byTransaction(gate.chainId, hash);
    const own = recorded.find((payment) => isPaymentOfGate(payment, gate));
    if (own) {
      await checkPayerSignature(this.chain, gate.ref, hash, own.payer as Hex, signature);
      return this.outcomeOf(own, gate);
    }
    // Recorded before transfers were told apart (no log index), or by our relayer's settlement not
    // yet confirmed: that transaction pays no other gate.
    if (recorded.some((payment) => payment.transferLogIndex === null))
      throw conflict('This payment proof was already used for another gate');
    assertPayable(gatePayment);

    const check = await checkTransfer(this.chain, gate, hash);
    if (check.kind === 'pending')
      return pending(gate.id, hash, 'The transaction is not mined or not confirmed yet; ask again shortly');
    const { receipt, minedAt } = check.transfer;
    const site = await gateSiteTerms(this.sites, gate);
    if (
      !payeeStands(site, gate.payTo, this.chain) &&
      !(await this.payouts.wasPayoutAt(site.publisherId, gate.payTo, minedAt))
    )
      throw transferToReplacedPayee();
    // A proof naming its payer is judged among that payer's transfers only.
    const candidates = named
      ? check.transfer.candidates.filter((candidate) => candidate.payer === named)
      : check.transfer.candidates;
    if (candidates.length === 0)
      throw new PaymentRejected(
        X402_REASONS.invalid_exact_evm_payload_recipient_mismatch,
        `The transaction holds no transfer of the gate's price to pay_to from ${named}`,
      );
    const taken = transfersTaken(receipt, recorded, authorizationSettledIn(this.chain, receipt));
    if (taken === 'changed')
      throw conflict(
        'This transaction no longer holds every transfer recorded for it (the chain reorganized); it pays no other gate',
      );
    // Recorded where a reorg moved them from: moved first, so this claim's index meets theirs on the unique key.
    await this.store.moveTransferIndexes(movedTransfers(taken));
    const claimed = await this.transfersClaimedElsewhere(gate, receipt);
    const signed = await transferSignedFor(
      this.chain,
      gate.ref,
      hash,
      candidates,
      new Set(taken.keys()),
      claimed,
      signature,
      (payer, check) => this.simulations.checkingContractPayer(gate.siteId, payer, named !== undefined, check),
    );
    if (signed === 'used') throw conflict('This payment proof was already used for another gate');
    const { payer, logIndex } = signed;
    const claim = await this.claim(gate, {
      method: 'transfer',
      status: 'submitted',
      payer,
      txHash: hash,
      transferLogIndex: logIndex,
    });
    if (claim.kind === 'taken') return this.outcomeOf(claim.payment, gate);
    // A reorg since the receipt was read may have moved the transfer to where another proof, reading
    // the receipt after it, claimed it at its new index: the claim stands only if the receipt as it
    // is now holds a Transfer for every payment recorded for the transaction.
    // Not kept when the chain cannot say (it is asked again with the proof).
    const holds = await this.transfersStillHold(gate.chainId, hash).catch(async (error: unknown) => {
      await this.store.deleteUnconfirmed(claim.payment.id);
      throw error;
    });
    if (!holds) {
      await this.store.deleteUnconfirmed(claim.payment.id);
      return pending(gate.id, hash, 'The transaction moved in a reorg while this proof was checked; ask again shortly');
    }
    const confirmed = await this.confirm(claim.payment.id, receipt, claim.payment);
    return { kind: 'paid', body: await this.paidView(confirmed.payment, gate.id, confirmed.token) };
  }

  /** Whether `hash`'s receipt, read now, holds a Transfer for every payment recorded for it (transfersHold). */
  private async transfersStillHold(chainId: number, hash: Hash): Promise<boolean> {
    const receipt = await onChain(() => this.chain.publicClient.getTransactionReceipt({ hash }).catch(notFoundAsNull));
    return receipt !== null && receipt.status === 'success' && this.transfersHold(chainId, receipt);
  }

  /**
   * Whether `receipt` holds a Transfer for every payment recorded for its transaction
   * (transfersTaken), `paymentId`'s included though its log index is not recorded yet (an
   * authorization's settlement): after a reorg, two payments may have claimed one Transfer.
   */
  async transfersHold(chainId: number, receipt: TransactionReceipt, paymentId?: string): Promise<boolean> {
    const recorded = (await this.store.byTransaction(chainId, receipt.transactionHash.toLowerCase())).filter(
      (payment) => payment.transferLogIndex !== null || payment.id === paymentId,
    );
    return transfersTaken(receipt, recorded, authorizationSettledIn(this.chain, receipt)) !== 'changed';
  }

  /**
   * The Transfers in `receipt` (by log index) that settle an authorization claimed for another
   * gate: the reconciler records each for its gate, so a proof takes one only as its payer's last
   * choice (its own transaction of it, copied and claimed meanwhile: the reconciler then releases
   * that claim, unless it recorded it first and the proof gets 409).
   * Our relayer's transaction that used such an authorization pays no other gate at all: a
   * broadcast its claim never recorded, which the reconciler records for that gate.
   */
  private async transfersClaimedElsewhere(gate: Gate, receipt: TransactionReceipt): Promise<Set<number>> {
    const fromRelayer = isAddressEqual(receipt.from, this.chain.relayer.account.address);
    const indexes = new Set<number>();
    const used = authorizationsUsedIn(this.chain, receipt).map(({ authorizer, nonce }) => ({
      payer: authorizer.toLowerCase(),
      nonce: nonce.toLowerCase(),
    }));
    // One read for them all: a bundle of many authorizations costs a proof no more round trips.
    const claims = await this.store.byNonces({ chainId: gate.chainId, asset: gate.asset }, used);
    for (const claim of claims) {
      if (isPaymentOfGate(claim, gate)) continue;
      if (fromRelayer) throw conflict('This transaction settled a payment authorized for another gate');
      const index = claim.authorization
        ? settledTransferIndex(this.chain, receipt, deserializeAuthorization(claim.authorization))
        : null;
      if (index !== null) indexes.add(index);
    }
    return indexes;
  }

  /** Settled, reverted, or still unconfirmed when the timeout passes (then the reconciler finishes it). */
  private async awaitSettlement(
    payment: Payment,
    gateId: string,
    hash: Hash,
    auth: SignedAuthorization,
  ): Promise<VerifyOutcome> {
    let receipt: TransactionReceipt | null;
    try {
      // The reconciler may have re-priced it meanwhile: its replacement, mined, is this payment's settlement.
      receipt = await waitForReceipt(this.chain, hash, this.chain.settlementTimeoutMs, (replacement) =>
        this.isSettlementOf(payment.id, replacement),
      );
    } catch (error) {
      if (!isChainUnreachable(error)) throw error;
      receipt = null;
    }
    if (!receipt) return pending(gateId, hash);
    // The hash mined: ours, or a re-priced copy of it.
    const mined = receipt.transactionHash;
    if (receipt.status !== 'success') {
      // Ours reverted, but the authorization may have been used by another transaction (a copy of
      // it sent ahead of ours): then the agent did pay, and the reconciler finds that transaction.
      // Canceled by the payer instead: nothing was charged, and the gate is payable again.
      const outcome = await authorizationOutcome(this.chain, auth.from, auth.nonce);
      if (outcome === 'used') return pending(gateId, mined);
      // Canceled, or unused: the payer made ours revert (or could have): it is not relayed again for a while.
      await this.relayRefusals.refuse(payment.chainId, auth.from, mined);
      if (outcome === 'canceled') {
        await this.release(payment.id);
        throw new PaymentRejected(
          X402_REASONS.invalid_exact_evm_nonce_already_used,
          'The payer canceled this authorization before it settled; nothing was charged',
        );
      }
      // Unused, and public now in our transaction's calldata: anyone may still send it until it
      // expires. The claim stays until the chain is past its end (the reconciler then releases it),
      // so a late copy pays this gate, not a second one (unless its payer names that very transaction
      // for another gate: transfersClaimedElsewhere). Our relayer does not send it again.
      return pending(
        gateId,
        mined,
        'The settlement transaction reverted, but its authorization can still settle until it expires: the gate is held for it until then, and paid if it settles. Ask again with the same proof.',
      );
    }
    const confirmed = await this.confirm(payment.id, receipt, payment);
    return { kind: 'paid', body: await this.paidView(confirmed.payment, gateId, confirmed.token) };
  }

  /** Whether `receipt` is of a hash broadcast for the payment's settlement, as its row says now. */
  private async isSettlementOf(paymentId: string, receipt: TransactionReceipt): Promise<boolean> {
    const payment = await this.store.byId(paymentId);
    return !!payment && isOwnHash(payment, receipt.transactionHash);
  }

  /**
   * Records the payment of a live gate: one insert, which the unique gate ref and proof keys make
   * atomic. A lost race returns the winner's row when it is this proof, else 409.
   */
  private async claim(
    gate: Gate,
    data: Pick<
      Prisma.PaymentUncheckedCreateInput,
      | 'method'
      | 'status'
      | 'payer'
      | 'nonce'
      | 'txHash'
      | 'transferLogIndex'
      | 'authorization'
      | 'paymentIdentifier'
      | 'paymentFingerprint'
    >,
  ): Promise<{ kind: 'claimed'; payment: Payment; ahead: ClaimAhead[] } | { kind: 'taken'; payment: Payment }> {
    // A transfer's gate was judged by the block its transfer was mined in (checkTransfer).
    if (data.method !== 'transfer' && !(gate.exp > Date.now() / 1000)) throw notFound(GATE_NOT_FOUND);
    try {
      // Nothing has moved yet for an authorization; a transfer is on chain already, so its gate is honoured as offered.
      if (data.method === 'authorization') return { kind: 'claimed', ...(await this.claimAsTermsStand(gate, data)) };
      const site = await gateSiteTerms(this.sites, gate);
      const row = { ...data, ...gatePaymentFields(gate, site.publisherId) };
      return { kind: 'claimed', payment: await this.store.claimTransfer(row), ahead: [] };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const winner = data.txHash
      ? await this.store.byTransfer({
          chainId: gate.chainId,
          txHash: data.txHash,
          transferLogIndex: data.transferLogIndex,
        })
      : data.nonce
        ? await this.store.byNonce({ chainId: gate.chainId, asset: gate.asset, payer: data.payer, nonce: data.nonce })
        : null;
    if (winner) return { kind: 'taken', payment: winner };
    // Another payment under the same payment-identifier won the race: the caller answers 409.
    const sameId = data.paymentIdentifier
      ? await this.store.byIdentifier({
          siteId: gate.siteId,
          payer: data.payer,
          paymentIdentifier: data.paymentIdentifier,
        })
      : null;
    if (sameId) return { kind: 'taken', payment: sameId };
    assertPayable(await this.store.byGate(gate.ref));
    throw conflict('The gate changed while this payment was checked; try again');
  }

  /**
   * An authorization's claim, judged by the site's terms as they are now and written only while
   * they still are (the claim holds them until it commits): a change between the two, made as a
   * resend of this payment was refused by it, judges the payment again (TERMS_ATTEMPTS).
   */
  private async claimAsTermsStand(
    gate: Gate,
    data: Parameters<PaymentsService['claim']>[1],
  ): Promise<{ payment: Payment; ahead: ClaimAhead[] }> {
    for (let attempt = 1; ; attempt++) {
      const site = await gateSiteTerms(this.sites, gate);
      await this.pricing.assertOfferStands(site, gate);
      assertPayeeStands(site, gate, this.chain);
      assertSecretOutlastsSettlement(gate, this.chain.settlementTimeoutMs);
      try {
        return await this.store.claimInPayerTurn({ ...data, ...gatePaymentFields(gate, site.publisherId) }, site);
      } catch (error) {
        if (error instanceof PayerTurnBusy)
          throw notCharged('Another payment of this payer is being recorded; nothing was charged: retry shortly', 1);
        if (!(error instanceof PaymentTermsChanged)) throw error;
        if (attempt === TERMS_ATTEMPTS) throw termsKeptChanging();
      }
    }
  }

  /**
   * Whether the payer's USDC covers the claim and `others` of the same payer not yet settled (five
   * concurrent payments of a payer holding enough for one broadcast one): a request counts those
   * written before its claim, the reconciler every other one in flight (read before this call).
   */
  payerCoverage(claim: Payment, ahead: ClaimAhead[]): Promise<Coverage> {
    return payerCoverageNow(this.chain, this.store, claim, ahead);
  }

  /** The answer for a proof that was already recorded: its result for the same gate, 409 for another. */
  private async outcomeOf(payment: Payment, gate: Gate): Promise<VerifyOutcome> {
    if (!isPaymentOfGate(payment, gate)) throw conflict('This payment proof was already used for another gate');
    if (payment.status === 'confirmed') return { kind: 'paid', body: await this.paidView(payment, gate.id) };
    const settled = await this.waitForRecorded(payment.id);
    if (settled?.status === 'confirmed') return { kind: 'paid', body: await this.paidView(settled, gate.id) };
    // Gone: its settlement failed, or its claim was let go when the chain changed under it (a reorg).
    if (!settled)
      throw new PaymentRejected(
        'unexpected_settle_error',
        'This proof is no longer being settled (its settlement failed, or the chain changed under it); it paid for nothing here: present it again to have it judged anew',
      );
    return pending(gate.id, settled.txHash);
  }

  /** Waits for a settlement another request (or the reconciler) is running to finish. */
  private async waitForRecorded(paymentId: string): Promise<Payment | null> {
    const deadline = Date.now() + this.chain.settlementTimeoutMs;
    for (;;) {
      const payment = await this.store.byId(paymentId);
      if (!payment || payment.status === 'confirmed' || Date.now() >= deadline) return payment;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Marks a payment confirmed and fixes the token it grants. Idempotent: the conditional update
   * lets only the first of several finalizers (request, reconciler) write.
   * The token is signed before the transaction, which must not wait on other queries.
   */
  async finalize(paymentId: string, receipt: TransactionReceipt): Promise<Payment> {
    return (await this.confirm(paymentId, receipt)).payment;
  }

  /**
   * finalize(), with the token it issued when this call is the one that confirmed the payment.
   * `known`: the payment's row as this request wrote it, which spares reading it back (the
   * conditional update still decides who confirms).
   */
  private async confirm(
    paymentId: string,
    receipt: TransactionReceipt,
    known?: Payment,
  ): Promise<{ payment: Payment; token: IssuedToken | null }> {
    const payment = known ?? (await this.existing(paymentId));
    if (payment.status === 'confirmed') return { payment, token: null };
    const transferLogIndex = this.creditedTransfer(payment, receipt);
    for (let attempt = 1; ; attempt++) {
      const signed = await this.signedToken(payment);
      const token = signed?.token ?? null;
      const confirmed = {
        status: 'confirmed' as const,
        txHash: receipt.transactionHash.toLowerCase(),
        transferLogIndex,
        blockNumber: receipt.blockNumber,
        confirmedAt: new Date(),
        tokenKid: token?.kid ?? null,
        tokenIssuedAt: token?.issuedAt ?? null,
        tokenExpiresAt: token?.expiresAt ?? null,
      };
      const outcome = await this.store.confirm(paymentId, confirmed, signed?.secretsVersion ?? null);
      if (outcome === 'confirmed') return { payment: { ...payment, ...confirmed }, token };
      if (outcome === 'not-confirmed') break;
      // A rotation since the token was signed: signed again, under the secrets as they are now.
      if (attempt === TERMS_ATTEMPTS)
        throw unavailable(
          'The site’s access-token secrets kept changing while this settled payment was confirmed; send it again for its token',
          5,
        );
    }
    // Another finalizer won: its row, with its token, is the answer.
    const winner = await this.existing(paymentId);
    if (winner.status !== 'confirmed')
      throw new Error(
        `Payment ${paymentId} stays open: ${receipt.transactionHash} already paid a gate before transfers were told apart`,
      );
    return { payment: winner, token: null };
  }

  /**
   * A token for `payment`, signed under the site's secrets' version read now (the confirmation
   * checks it still is): with its gate's secret while that one outlasts a settlement (a token
   * the middleware that minted the gate opens), else with the current one, as the money has
   * moved and a token ending with its secret in seconds would be paid for and worthless. A
   * deleted site has no secret: the payment is confirmed without a token (answered 410). Any
   * other failure leaves it unconfirmed, for a retry or the reconciler to confirm with its token.
   */
  private async signedToken(payment: Payment): Promise<{ token: IssuedToken; secretsVersion: number } | null> {
    const secretsVersion = await this.secrets.versionOf(payment.siteId);
    if (secretsVersion !== null) {
      const grant = { gateId: payment.gateId, siteId: payment.siteId, url: payment.url, secretsVersion };
      const issue = (kid?: string) =>
        this.tokens.issue({ ...grant, kid }).catch((error: Error) => {
          if (!(error instanceof NoCurrentSecret)) throw error;
          return null;
        });
      let token = await issue(payment.tokenKid ?? undefined);
      if (token && !outlastsSettlement(token.secretRetiresAt, this.chain.settlementTimeoutMs)) token = await issue();
      if (token) return { token, secretsVersion };
    }
    this.logger.error(`No token for gate ${payment.gateId}: its site is gone`);
    return null;
  }

  /**
   * The Transfer in `receipt` that pays this payment: the one its claim named (a transfer), or its
   * authorization's own. One transfer pays one gate (a unique index); a receipt that does not hold
   * this payment's confirms nothing.
   */
  private creditedTransfer(payment: Payment, receipt: TransactionReceipt): number {
    const index =
      payment.transferLogIndex ??
      (payment.authorization
        ? settledTransferIndex(this.chain, receipt, deserializeAuthorization(payment.authorization))
        : transferIndexOf(this.chain, receipt, payment));
    if (index === null)
      throw new Error(`Transaction ${receipt.transactionHash} holds no transfer that pays payment ${payment.id}`);
    return index;
  }

  private async existing(paymentId: string): Promise<Payment> {
    const payment = await this.store.byId(paymentId);
    if (!payment) throw new Error(`Payment ${paymentId} is gone`);
    return payment;
  }

  /** Forgets a settlement that never happened: the gate is payable again. */
  async release(paymentId: string): Promise<void> {
    await this.store.deleteUnconfirmed(paymentId);
  }

  /**
   * `gateId`: the signed id the caller asked with (the payment holds the gate's ref). `issued`: the
   * token confirming the payment just issued, when this request confirmed it.
   */
  private async paidView(payment: Payment, gateId: string, issued?: IssuedToken | null): Promise<PaidView> {
    if (!payment.tokenKid || !payment.tokenIssuedAt || !payment.tokenExpiresAt) {
      throw paidSiteGone();
    }
    const grant = { gateId: payment.gateId, siteId: payment.siteId, url: payment.url };
    const token =
      issued ??
      (await this.tokens
        .reissue(grant, payment.tokenKid, payment.tokenIssuedAt, payment.tokenExpiresAt)
        .catch(siteGoneAs410));
    return {
      status: 'paid',
      access_token: token.token,
      expires_at: token.expiresAt.toISOString(),
      gate_id: gateId,
      url: payment.url,
      tx_hash: payment.txHash!,
      payer: payment.payer,
      amount: payment.amount.toString(),
      price_usd: formatMicrosUsd(payment.amount),
      network: this.chain.network.name,
    };
  }
}

/** A gate another proof has paid, or is paying, cannot take this one. */
function assertPayable(payment: Payment | null): void {
  if (payment?.status === 'confirmed') throw conflict('This gate is already paid with another proof');
  if (payment) throw conflict('This gate is being settled with another payment');
}

const payerInFlightFull = () =>
  notCharged(
    `${MAX_PAYER_SETTLEMENTS_IN_FLIGHT} settlements of this payer are in flight, the most at once; nothing was charged: retry shortly (or pay many pages with batch-settlement vouchers)`,
    1,
  );

const nonceOfADepositInFlight = () =>
  new PaymentRejected(
    X402_REASONS.invalid_exact_evm_nonce_already_used,
    'The authorization’s nonce is that of a deposit of this payer the relayer is sending; nothing was charged',
  );

/**
 * A contract payer's signature is checked by its own code, which can pass the simulation and fail
 * on chain (tx.gasprice, the block, state it changes): each such settlement reverts at the relayer's
 * cost and none of the payer's. So a contract's authorizations are settled one at a time, and one
 * held after a revert (until it expires) holds the next: at most one reverted settlement per
 * contract payer and authorization lifetime, not one per request sent at once.
 */
const contractPayerInTurn = () =>
  notCharged(
    'A contract wallet’s payments are settled one at a time, and one before this is still settling (or held until it expires, having reverted); nothing was charged: retry shortly',
    2,
  );

function pending(
  gateId: string,
  txHash: string | null,
  detail = 'The settlement is not confirmed yet; it will be finished in the background. Ask again with the same proof.',
): VerifyOutcome {
  return { kind: 'pending', body: { status: 'settlement_pending', gate_id: gateId, tx_hash: txHash, detail } };
}

/** What the reconciler needs to resubmit or look up an authorization, as JSON (bigints as strings). */
export function serializeAuthorization(auth: SignedAuthorization): Prisma.InputJsonObject {
  return {
    from: auth.from,
    to: auth.to,
    value: auth.value.toString(),
    validAfter: auth.validAfter.toString(),
    validBefore: auth.validBefore.toString(),
    nonce: auth.nonce,
    signature: auth.signature,
  };
}

/** For transfersTaken: where an authorization's payment used its nonce in `receipt`; undefined for a payment that is no authorization's. */
export function authorizationSettledIn(
  chain: Pick<ChainContext, 'usdc'>,
  receipt: Pick<TransactionReceipt, 'status' | 'logs'>,
): (payment: Pick<Payment, 'authorization'>) => number | null | undefined {
  return (payment) =>
    payment.authorization
      ? settledTransferIndex(chain, receipt, deserializeAuthorization(payment.authorization))
      : undefined;
}

export function deserializeAuthorization(json: unknown): SignedAuthorization {
  const a = json as Record<string, string>;
  return {
    from: a.from as `0x${string}`,
    to: a.to as `0x${string}`,
    value: BigInt(a.value),
    validAfter: BigInt(a.validAfter),
    validBefore: BigInt(a.validBefore),
    nonce: a.nonce as `0x${string}`,
    signature: a.signature as `0x${string}`,
  };
}

/** The reconciler took the claim for its own broadcast first: this request sends nothing. */
class ClaimTaken extends Error {}

/** Whether the payment kept under an id is this very one (the same payment, fingerprinted, for the same gate). */
function isThisPayment(kept: Payment, gate: Gate, fingerprint: string): boolean {
  return sameFingerprint(kept.paymentFingerprint, fingerprint) && isPaymentOfGate(kept, gate);
}
