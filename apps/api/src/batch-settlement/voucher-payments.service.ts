import {
  BATCH_REASONS,
  formatMicrosUsd,
  parseBatchSettlementPayment,
  readGate,
  type BatchSettlementPayment,
  type GateTerms,
  type RefundedChannel,
  type VoucherPaid,
  X402_REASONS,
} from '@crawlgate/core';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isAddressEqual, zeroAddress, type Hash, type Hex } from 'viem';
import { AccessTokenService, type IssuedToken } from '../access-tokens/access-token.service';
import type { BatchSettlementChain, ChainContext } from '../chain/chain-context';
import { hasCode } from '../chain/account-code';
import { channelIdOf, depositCalldata, depositNonce, readConfirmedChannel, type OnChainChannel } from '../chain/escrow';
import { SignerKeys } from '../chain/signer-keys';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import { afterPendingWrites } from '../db/after-pending-writes';
import { isUniqueViolation } from '../db/prisma-errors';
import { CONFIG } from '../db/tokens';
import {
  assertPayeeStands,
  assertPaysNoOwnAddress,
  assertSecretOutlastsSettlement,
  GATE_NOT_FOUND,
  gatePaymentFields,
  gateSiteTerms,
  isGateOfChain,
  isPaymentOfGate,
  isPaymentOfGatesPage,
  siteGoneAs410,
  termsKeptChanging,
  TERMS_ATTEMPTS,
  type Gate,
} from '../gates/gates.service';
import type { Payment } from '../generated/prisma/client';
import { conflict, notCharged, notFound, unavailable } from '../http/api-error';
import {
  chainUnavailable,
  failedBroadcast,
  isChainUnreachable,
  nothingSentAnswer,
  onChain,
  revertMessage,
} from '../payments/chain-errors';
import { isAuthorizationUsed } from '../payments/authorization-checks';
import { whyDepositReverted } from './reverted-deposit';
import { PaymentRejected, RELAY_REASONS } from '../payments/payment-rejected';
import { payerCoverageNow } from '../payments/payer-balance';
import { PayerTurnBusy, PaymentStore, type MoneyInFlight, type PayerKey } from '../payments/payment.store';
import { RelayRefusalsStore } from '../payments/relay-refusals.store';
import { PricingService } from '../pricing/pricing.service';
import { NoCurrentSecret } from '../sites/site-secrets.service';
import { SitePaymentTermsStore, type SitePaymentTerms } from '../sites/site-payment-terms.store';
import type { PaidView } from '../payments/payments.dto';
import { broadcastFromRelayer, prepareRelayerCall, waitForReceipt } from '../payments/settlement';
import { chargedBase, channelState, correction, publicTotal, spendableOf, takesWithoutRead } from './channel-state';
import {
  ChannelStore,
  DepositOnItsWay,
  type ChannelRecord,
  type DepositRecord,
  type VoucherPayment,
  type VoucherPaymentData,
} from './channel.store';
import { ClaimerService } from './claimer.service';
import { RecentChannelStates } from './recent-channel-states';
import { assertPayerSigned, payerSigned, requirePayerSignature } from './payer-signature';
import { refundInFlight, RefundsService } from './refunds.service';

/** The largest cumulative total a channel row stores (PostgreSQL bigint). */
const MAX_CHANNEL_TOTAL = 2n ** 63n - 1n;

/** What VoucherPaymentsService.readAhead() started for one request: its channel's record and the payer's signature. */
export interface VoucherReadsAhead {
  gateId: string;
  raw: unknown;
  channelId: Hex;
  record: ReturnType<ChannelStore['voucherRecord']>;
  /** Started only for a payer whose key is admitted (SignerKeys). */
  signed: Promise<boolean> | undefined;
}
/**
 * How long a payer's deposit lease holds at least once its holder stopped (died, or gave up waiting
 * for a deposit that may still land); never less than the longest a deposit is waited for, and a minute.
 */
const DEPOSIT_LEASE_SECONDS = 120;
/** How long a deposit waits for the payer's one before it (a few blocks), and how often it looks. */
const DEPOSIT_LEASE_WAIT_MS = 10_000;
const DEPOSIT_LEASE_POLL_MS = 100;

/**
 * Whether recording a voucher first writes the channel's row (opens it, or raises it to the chain's
 * claims): a channel first seen, or one whose record is behind the chain.
 */
const opensRow = (row: ChannelRecord | null, state: OnChainChannel) => !row || row.charged < state.totalClaimed;

/** A deposit sent and not seen landed: the same payment sent again is answered for it, never deposited twice. */
const depositOnItsWay = () =>
  unavailable(
    'The deposit is sent and not confirmed yet; send the same payment again shortly (it is never deposited twice)',
  );

/** A deposit not written down was never signed into a broadcast: nothing left, nothing charged. */
const notSent = () =>
  notCharged('The deposit was not sent; nothing was charged: send the same payment again shortly', 5);

const noVouchers = () =>
  new PaymentRejected(BATCH_REASONS.scheme, 'This site does not take batch-settlement vouchers; pay with exact');

/** recorded_only's refusal: it answers for a voucher already taken for the gate, and takes none. */
const notRecorded = (why: string) =>
  new PaymentRejected(
    X402_REASONS.invalid_payload,
    `With recorded_only, ${why}, and none is taken; nothing was charged`,
  );

/**
 * Pays a gate with an x402 batch-settlement voucher (deposit + voucher, or voucher alone). The
 * voucher must be for this API's channel terms (receiver = the gate's pay-to, our receiver
 * authorizer, the chain's USDC, our withdraw delay), signed by the channel's payer authorizer as
 * strictly as the escrow checks it, and carry exactly what the channel was charged plus this gate's
 * price; a different total gets x402's corrective 402. It must fit the channel's balance on chain
 * with the configured confirmations, as a tx-hash proof must have them (a deposit runs first,
 * through the relayer, and is confirmed; one the payer sent itself counts once it is as deep).
 * Accepting it records the voucher and the gate's payment in one transaction and issues the token
 * at once: escrowed funds count as settled; the claimer collects them later. A channel's chain state read for one voucher judges the
 * next ones for a few seconds (CHANNEL_STATE_REUSE_MS), as long as they fit it (takesWithoutRead).
 */
@Injectable()
export class VoucherPaymentsService {
  private readonly logger = new Logger('Vouchers');
  private readonly recentStates: RecentChannelStates;

  constructor(
    @Inject(CHAIN) private readonly chain: ChainContext,
    @Inject(CONFIG) config: AppConfig,
    private readonly store: ChannelStore,
    private readonly tokens: AccessTokenService,
    private readonly refunds: RefundsService,
    private readonly pricing: PricingService,
    private readonly sites: SitePaymentTermsStore,
    private readonly claimer: ClaimerService,
    private readonly relayRefusals: RelayRefusalsStore,
    private readonly payments: PaymentStore,
    /** The payers' keys: a payer's next vouchers are checked against its key rather than recovered. */
    private readonly signerKeys: SignerKeys,
  ) {
    this.recentStates = new RecentChannelStates(config.chain.batchSettlement.channelStateReuseMs);
  }

  /**
   * Starts what a voucher's verify reads whatever its gate says, before the gate is looked up: the
   * channel's record (a round trip to the database beside the gate's own) and the payer's signature
   * (CPU, run while the database answers). Judged on the gate's terms as its id states them,
   * unchecked: verify() takes them only for this very gate id and payment, once the gate checked out,
   * and gives its verdicts in the same order as without them. Undefined for anything it cannot read.
   */
  readAhead(gateId: string, raw: unknown): VoucherReadsAhead | undefined {
    const batch = this.chain.batchSettlement;
    const terms = readGate(gateId);
    const parsed = parseBatchSettlementPayment(raw);
    // Nothing for a gate the lookup refuses without reading anything (another chain's or asset's, or
    // expired): such a forged id buys no database read. One the lookup reads before refusing it (its
    // MAC needs the site's secret) buys one read more and, for an admitted payer, a signature check
    // (a fraction of a millisecond), within FORGED_GATES_PER_CLIENT a minute per client.
    if (!batch || !terms || !parsed.ok || !isGateOfChain(terms, this.chain) || !(terms.exp > Date.now() / 1000))
      return undefined;
    const channelId = this.candidateChannel(this.channelCheck(terms, batch, parsed.payment), parsed.payment);
    if (!channelId) return undefined;
    const record = this.store.voucherRecord(channelId, parsed.payment.voucher.maxClaimableAmount);
    record.catch(() => undefined); // awaited by verify(), or dropped with a gate that did not check out
    // Checked ahead only against a key already admitted (a fraction of a millisecond): recovering the
    // key of a signer never met costs several times more, and waits for the gate to check out.
    const signed = this.signerKeys.knows(parsed.payment.channelConfig.payerAuthorizer)
      ? // The database driver writes a query on a later turn of the event loop: checking first would hold it back.
        afterPendingWrites().then(() => payerSigned(this.chain, batch, parsed.payment, this.signerKeys))
      : undefined;
    signed?.catch(() => undefined);
    return { gateId, raw, channelId, record, signed };
  }

  /** The channel a voucher (not a refund) names, when the check found it this API's for the gate and its total fits the database. */
  private candidateChannel(
    channel: ReturnType<VoucherPaymentsService['channelCheck']>,
    payment: BatchSettlementPayment,
  ): Hex | undefined {
    return 'id' in channel && payment.type !== 'refund' && payment.voucher.maxClaimableAmount <= MAX_CHANNEL_TOTAL
      ? channel.id
      : undefined;
  }

  /**
   * `recordedOnly`: answer for this voucher if it was taken for this gate, take none (a gate offered
   * before its path's price rose: its payer may have paid it then, and its answer been lost).
   * `site`: the site's terms as the gate's check read them (GatesService.findLive); null for a site deleted.
   * `ahead`: what readAhead() started for this request.
   */
  async verify(
    gate: Gate,
    gatePayment: Payment | null,
    site: SitePaymentTerms | null,
    raw: unknown,
    recordedOnly = false,
    ahead?: VoucherReadsAhead,
  ): Promise<{ kind: 'paid'; body: PaidView } | { kind: 'refunded'; body: RefundedChannel }> {
    const parsed = parseBatchSettlementPayment(raw);
    if (!parsed.ok) throw new PaymentRejected(parsed.reason, parsed.msg);
    const payment = parsed.payment;
    const { voucher } = payment;
    const batch = this.chain.batchSettlement;
    // The voucher's record is read while the signature is recovered (CPU): the read goes out first,
    // then the recovery runs as the database answers. The verdicts are given below in the order they
    // always were; the chain is asked (RPC calls, metered on hosted nodes) only once the signature
    // checked out, so an unsigned voucher costs no RPC.
    const channel = batch && this.channelCheck(gate, batch, payment);
    const candidate = channel ? this.candidateChannel(channel, payment) : undefined;
    // Started before the gate's lookup, for this gate and payment (the same channel, as the gate's terms are its id's).
    const readsAhead =
      ahead && ahead.gateId === gate.id && ahead.raw === raw && ahead.channelId === candidate ? ahead : undefined;
    // The record read ahead may predate the gate's payment read: a twin of this voucher recorded in
    // between shows as the gate paid but the voucher not taken (then 409, not the twin's answer).
    // With the gate paid, or for recorded_only (whose "not recorded" is final), it is read again, after.
    const recordAhead = gatePayment || recordedOnly ? undefined : readsAhead?.record;
    const recordRead = candidate && (recordAhead ?? this.store.voucherRecord(candidate, voucher.maxClaimableAmount));
    recordRead?.catch(() => undefined);
    let signed = readsAhead?.signed;
    if (batch && candidate && !signed) {
      // The database driver writes a query on a later turn of the event loop: recovering first would hold both back.
      await afterPendingWrites();
      signed = payerSigned(this.chain, batch, payment, this.signerKeys);
      signed.catch(() => undefined);
    }
    if (!site) throw notFound(GATE_NOT_FOUND);
    if (!batch) throw noVouchers();
    // A voucher taken for this gate is answered as it was whatever the terms now (batch settlement
    // switched off since, the channel terms the API asks changed): it was paid, its answer maybe lost.
    let channelId: Hex;
    try {
      if (!site.batchSettlement) throw noVouchers();
      if (!channel || 'refused' in channel) throw channel ? channel.refused : noVouchers();
      channelId = channel.id;
    } catch (error) {
      const answered = await this.answerIfTaken(gate, batch, payment);
      if (answered) return answered;
      throw error;
    }
    // x402 allows a uint128; no channel holds more than all the USDC there is, far below the
    // database's 64-bit totals, which such a total would overflow.
    if (voucher.maxClaimableAmount > MAX_CHANNEL_TOTAL)
      throw new PaymentRejected(
        BATCH_REASONS.cumulativeExceedsBalance,
        'The voucher’s total is above any channel’s balance',
      );
    if (payment.type === 'refund') {
      if (recordedOnly) throw notRecorded('a refund is never recorded for a gate');
      await requirePayerSignature(this.chain, batch, payment, this.signerKeys);
      return this.refunds.refund(gate, payment, channelId);
    }
    // A gate minted to an address no payment may go to takes no new voucher (a refund pays nothing).
    if (!gatePayment) assertPaysNoOwnAddress(gate, this.chain);
    let recorded = recordRead ?? this.store.voucherRecord(channelId, voucher.maxClaimableAmount);
    recorded.catch(() => undefined);
    assertPayerSigned(await (signed ?? payerSigned(this.chain, batch, payment, this.signerKeys)));
    // A deposit is judged on the chain as it is; a voucher alone may be on a state read a moment ago,
    // while this instance's claimer would collect it before a withdrawal unseen then could take it.
    const recent = payment.deposit || !this.claimer.keepsUp() ? undefined : this.recentStates.get(channelId);
    let chainRead = recent ? Promise.resolve(recent) : this.readChannel(batch, channelId);
    chainRead.catch(() => undefined); // awaited below, after the database's answer is judged
    if ((await recorded).channel?.refundHeld) {
      // A refund holds the channel: vouchers wait until it landed, so none is taken against funds it
      // returns; the channel is then read again, after the refund.
      if (!(await this.refunds.releaseIfOver(channelId))) throw refundInFlight();
      recorded = this.store.voucherRecord(channelId, voucher.maxClaimableAmount);
      chainRead = this.readChannel(batch, channelId);
      chainRead.catch(() => undefined);
    }
    const { channel: row, taken } = await recorded;
    if (row?.refundHeld) throw refundInFlight();
    // The same voucher again for its gate, or for another gate of its page while it is not public
    // (sent again without naming its gate): the same answer. For any other gate its total is behind
    // the channel's, so it gets the corrective 402 below (a client restarted without its state
    // signs exactly such a voucher; x402 has it recover from that answer).
    if (taken && (await answersGate(taken, gate, row, () => chainRead)))
      return this.answerFor(taken, gate, channelId, chainRead);
    if (recordedOnly) throw notRecorded('no voucher of this gate with this total is recorded');
    if (gatePayment)
      throw conflict(
        gatePayment.status === 'confirmed'
          ? 'This gate is already paid with another proof'
          : 'This gate is being settled with another payment',
      );

    try {
      await this.pricing.assertOfferStands(site, gate);
      assertPayeeStands(site, gate, this.chain);
      assertSecretOutlastsSettlement(gate, this.chain.settlementTimeoutMs);
      const [relayerCanClaim, claimerKeepsUp] = await Promise.all([
        this.claimer.relayerCanClaimNow(),
        this.claimer.someoneKeepsUp(),
      ]);
      if (!relayerCanClaim)
        throw notCharged(
          'The relayer cannot pay for a claim now, so no voucher is taken (a voucher is money only once claimed); nothing was charged: retry later, or pay with exact',
          30,
        );
      if (!claimerKeepsUp)
        throw notCharged(
          'No claimer has finished a run recently, so no voucher is taken (a voucher is money only once claimed); nothing was charged: retry later, or pay with exact',
          30,
        );

      let state = await chainRead;
      // A recent state takes only what a fresh read would; anything it would refuse is judged on the chain now.
      if (state === recent && !takesWithoutRead(row, state, voucher.maxClaimableAmount, gate.micros))
        state = await this.readChannel(batch, channelId);
      const charged = chargedBase(row, state);
      if (voucher.maxClaimableAmount !== charged + gate.micros)
        throw correction(channelId, charged, row, state, charged + gate.micros, voucher.maxClaimableAmount);

      let depositTx: Hash | null = null;
      if (payment.deposit) {
        // Judged before anything is sent: the relayer pays the deposit's gas, so a deposit for a
        // voucher refused anyway, or one smaller than the page it comes with, is never sent.
        if (voucher.maxClaimableAmount > spendableOf(state) + payment.deposit.amount) {
          throw new PaymentRejected(
            BATCH_REASONS.cumulativeExceedsBalance,
            `The voucher's total ${voucher.maxClaimableAmount} is above what the channel would hold with this deposit; deposit more`,
          );
        }
        if (payment.deposit.amount < gate.micros) {
          throw new PaymentRejected(
            BATCH_REASONS.depositPayload,
            `A deposit must cover at least the page it comes with (${gate.micros} atomic units)`,
          );
        }
        depositTx = await this.deposit(batch, payment, channelId);
        state = await this.readChannel(batch, channelId);
      }
      if (state.balance === 0n)
        throw new PaymentRejected(
          BATCH_REASONS.channelNotFound,
          `The channel holds nothing on chain (a deposit counts once it has ${this.chain.confirmations} confirmation(s)): send a deposit with the voucher`,
        );
      const spendable = spendableOf(state);
      if (voucher.maxClaimableAmount > spendable) {
        throw new PaymentRejected(
          BATCH_REASONS.cumulativeExceedsBalance,
          `The voucher's total ${voucher.maxClaimableAmount} is above what the channel holds (${spendable} spendable, deposits counted once they have ${this.chain.confirmations} confirmation(s)); deposit more`,
        );
      }
      // Judged again just before it is charged, as an authorization is: the checks above may have
      // waited seconds (RPC calls; a deposit's lease and receipt), while the price rose or vouchers
      // were turned off, and a payer whose answer was lost sent it again, to be told it was not taken
      // and to pay anew. The record takes the voucher only while the terms it is given stand (their
      // version and payout, under a share lock) and writes nothing otherwise; they are then read and
      // judged again. A voucher alone on a channel as its row has it goes first on the terms judged
      // above (a read less on the common path); with a deposit, or a row to write first, they are
      // read again before (a change read then refuses it; a deposit made stays in the channel).
      let terms = payment.deposit || opensRow(row, state) ? await this.termsNow(gate) : site;
      for (let attempt = 1; ; attempt++) {
        const recorded = await this.record(gate, terms, payment, channelId, { row, charged }, state, depositTx);
        if (recorded) {
          // Taken against funds on chain: this payer's next vouchers are checked against its key.
          this.signerKeys.admit(payment.channelConfig.payerAuthorizer);
          return recorded;
        }
        if (attempt === TERMS_ATTEMPTS) throw termsKeptChanging();
        terms = await this.termsNow(gate);
      }
    } catch (error) {
      // Refused after the channel's record was read (this voucher not taken then): its twin (the
      // same voucher sent again at once, a front's retry) may have taken it since. Its answer then,
      // as the twin got it: a payer told "refused" would pay anew for a page it paid.
      const { channel: now, taken } = await this.store
        .voucherRecord(channelId, voucher.maxClaimableAmount)
        .catch(() => ({ channel: null, taken: null }));
      if (taken && (await answersGate(taken, gate, now, () => chainRead).catch(() => false)))
        return this.answerFor(taken, gate, channelId);
      throw error;
    }
  }

  /** The site's terms as they are now, judged again for this gate. */
  private async termsNow(gate: Gate): Promise<SitePaymentTerms> {
    const now = await gateSiteTerms(this.sites, gate);
    if (!now.batchSettlement) throw noVouchers();
    await this.pricing.assertOfferStands(now, gate);
    assertPayeeStands(now, gate, this.chain);
    return now;
  }

  /**
   * The channel's state on chain now, its balance at the configured confirmations
   * (readConfirmedChannel), remembered for the vouchers that follow: a state reused is as deep.
   */
  private async readChannel(batch: BatchSettlementChain, channelId: Hex): Promise<OnChainChannel> {
    const readAt = this.recentStates.startOfRead();
    const state = await onChain(() => readConfirmedChannel(this.chain, batch, channelId));
    this.recentStates.remember(channelId, state, readAt);
    return state;
  }

  /** checkChannel's answer, its refusal kept to be thrown in its turn. */
  private channelCheck(
    gate: Pick<GateTerms, 'payTo'>,
    batch: BatchSettlementChain,
    payment: BatchSettlementPayment,
  ): { id: Hex } | { refused: unknown } {
    try {
      return { id: this.checkChannel(gate, batch, payment) };
    } catch (refused) {
      return { refused };
    }
  }

  /** The channel config must be this API's terms for this gate; returns the channel id it hashes to. */
  private checkChannel(
    gate: Pick<GateTerms, 'payTo'>,
    batch: BatchSettlementChain,
    payment: BatchSettlementPayment,
  ): Hex {
    const { accepted, channelConfig: config, voucher } = payment;
    const reject = (reason: string, detail: string): never => {
      throw new PaymentRejected(reason, detail);
    };
    if (accepted.network !== this.chain.network.caip2)
      reject(BATCH_REASONS.networkMismatch, `This gate is paid on ${this.chain.network.caip2}`);
    if (!isAddressEqual(config.receiver, gate.payTo))
      reject(BATCH_REASONS.receiverMismatch, 'The channel’s receiver is not this gate’s pay-to');
    // Whoever holds the payout key (a wallet replaced since, lost with its key) would read for gas alone.
    if (isAddressEqual(config.payer, gate.payTo))
      reject(
        BATCH_REASONS.receiverMismatch,
        'The channel’s payer is this gate’s pay-to, its receiver: vouchers to itself pay nothing',
      );
    if (!isAddressEqual(config.receiverAuthorizer, batch.authorizer.address))
      reject(BATCH_REASONS.receiverAuthorizerMismatch, 'The channel’s receiverAuthorizer is not this API’s');
    if (!isAddressEqual(config.token, this.chain.usdc))
      reject(BATCH_REASONS.tokenMismatch, 'The channel’s token is not this gate’s asset');
    if (config.withdrawDelay !== batch.withdrawDelaySeconds)
      reject(BATCH_REASONS.withdrawDelayMismatch, `The channel’s withdrawDelay must be ${batch.withdrawDelaySeconds}`);
    // x402 lets a zero payerAuthorizer mean "the payer signs, maybe as a contract (ERC-1271)": refused,
    // because the escrow asks such a wallet's isValidSignature again at claim time, and the wallet can
    // answer no by then: the page would have been served against a voucher that cannot be claimed.
    if (isAddressEqual(config.payerAuthorizer, zeroAddress))
      reject(BATCH_REASONS.voucherSignature, 'The channel needs a payerAuthorizer (an EOA that signs vouchers)');
    const channelId = channelIdOf(this.chain, batch, config);
    if (channelId !== voucher.channelId.toLowerCase())
      reject(BATCH_REASONS.channelIdMismatch, 'The voucher’s channelId is not the hash of its channelConfig');
    return channelId;
  }

  /** The answer for a voucher taken for this gate before (its signature checked again), if it was. */
  private async answerIfTaken(
    gate: Gate,
    batch: BatchSettlementChain,
    payment: BatchSettlementPayment,
  ): Promise<{ kind: 'paid'; body: PaidView } | undefined> {
    const { voucher } = payment;
    if (payment.type === 'refund' || voucher.maxClaimableAmount > MAX_CHANNEL_TOTAL) return undefined;
    const channelId = channelIdOf(this.chain, batch, payment.channelConfig);
    if (channelId !== voucher.channelId.toLowerCase()) return undefined;
    const { channel: row, taken } = await this.store.voucherRecord(channelId, voucher.maxClaimableAmount);
    // An unsigned copy gets the refusal it would have had anyway: no answer tells whether a voucher
    // was taken. Signed, it is judged as when vouchers are on (the chain read only for another gate of its page).
    if (!taken || !(isPaymentOfGate(taken, gate) || isPaymentOfGatesPage(taken, gate))) return undefined;
    if (!(await payerSigned(this.chain, batch, payment, this.signerKeys))) return undefined;
    if (!(await answersGate(taken, gate, row, () => this.readChannel(batch, channelId)))) return undefined;
    return this.answerFor(taken, gate, channelId);
  }

  /** Runs the payment's deposit through the relayer and waits for it; null when this authorization already deposited (a retry). */
  private async deposit(
    batch: BatchSettlementChain,
    payment: BatchSettlementPayment,
    channelId: Hex,
  ): Promise<Hash | null> {
    const { deposit, channelConfig: config } = payment;
    const nonce = depositNonce(channelId, deposit!.erc3009.salt);
    const used = () => onChain(() => isAuthorizationUsed(this.chain, config.payer, nonce));
    if (await used()) {
      await this.store.endDepositLeaseOf(config.payer, nonce); // kept while it might land: it has
      return null;
    }
    const data = depositCalldata(batch, config, deposit!.amount, deposit!.erc3009);
    // A contract payer's deposit authorization is checked by its own code (ERC-1271), which can pass
    // the simulation and fail on chain: the relayer would pay for each revert, the payer nothing.
    // Such a payer sends its deposit to the escrow itself (it counts once confirmed).
    if (await onChain(() => hasCode(this.chain.publicClient, config.payer)))
      throw new PaymentRejected(
        BATCH_REASONS.depositPayload,
        'The relayer sends deposits of EOA payers only: a contract wallet (or an account delegating to one) deposits into its channel itself, then pays with vouchers',
      );
    if (await this.relayRefusals.isRefused(this.chain.chainId, config.payer))
      throw new PaymentRejected(
        RELAY_REASONS.refused,
        'A transaction our relayer sent for this payer reverted on chain lately, so its deposits are not relayed for 24 hours: deposit into the channel yourself, then pay with vouchers',
      );
    // Judged before it may wait for the payer's lease: the token checks the payer's signature (a
    // contract wallet's too), so no one else can hold a payer's deposits up with deposits it did not sign.
    await this.simulateDeposit(batch, data);
    // One deposit of a payer at a time, judged again against a chain that holds the one before:
    // deposits sent at once were each judged without the others, and all but one reverted at our cost.
    const lease = {
      ...this.payerKey(config.payer),
      id: randomUUID(),
      nonce,
      amount: deposit!.amount,
      validBefore: validBeforeOf(deposit!),
    };
    const ahead = await this.waitForDepositLease(lease);
    // Kept when the deposit may still land (sent, not confirmed): the next one must see it first.
    let keepLease = false;
    try {
      if (await used()) return null;
      // An exact payment of the payer signed with this authorization's nonce: only one of the two can
      // land, and sent beside it, the other reverts at our gas (and nobody is refused: its nonce is used).
      const sameNonce = ahead.filter((one) => one.nonce?.toLowerCase() === nonce.toLowerCase());
      if (sameNonce.some((one) => one.kind === 'claim'))
        throw new PaymentRejected(
          BATCH_REASONS.depositPayload,
          'The deposit authorization’s nonce is that of an exact payment of this payer being settled; nothing was charged',
        );
      // The payer's exact settlements in flight move the same USDC: sent beside them, one of the two reverts.
      const coverage = await payerCoverageNow(this.chain, this.payments, lease, ahead);
      if (coverage === 'spent') return null; // a copy of it landed since used() read it
      if (coverage === 'short')
        throw new PaymentRejected(
          X402_REASONS.insufficient_funds,
          'The payer’s USDC, less what its payments in flight will take, does not cover this deposit; nothing was charged',
        );
      await this.simulateDeposit(batch, data);
      let hash: Hash;
      /** The relayer nonce it was written down with; unset, nothing was broadcast. */
      let relayerNonce: number | undefined;
      const sent = {
        channelId,
        payer: config.payer,
        authorizationNonce: nonce,
        amount: lease.amount,
        validBefore: lease.validBefore,
      };
      try {
        hash = await this.sendDeposit(
          batch,
          sent,
          config.receiver,
          lease.id,
          data,
          (signedAt) => (relayerNonce = signedAt),
        );
      } catch (error) {
        // This deposit sent before (its request stopped waiting, its lease taken over since), on its
        // way at another relayer nonce: a second copy would revert once the first lands, at our gas.
        if (error instanceof DepositOnItsWay) throw depositOnItsWay();
        const unsent = relayerNonce !== undefined ? nothingSentAnswer(error) : (nothingSentAnswer(error) ?? notSent());
        if (unsent) {
          // The hash whose broadcast never reached the node is not the payer's money in flight (it
          // would hold the payer's balance until the sweep saw its relayer nonce taken). One an
          // earlier attempt's node refused is left to the sweep: a gateway may say so of one it sent.
          const neverSent = failedBroadcast(error)?.hash;
          if (neverSent)
            await this.store
              .dropDeposit(this.chain.chainId, neverSent)
              .catch((dropFailed: unknown) =>
                this.logger.warn(`Deposit ${neverSent} was never sent but stays written down: ${String(dropFailed)}`),
              );
          throw unsent;
        }
        keepLease = true;
        throw unavailable(
          'The deposit may have been sent; send the same payment again shortly (it is never deposited twice)',
        );
      }
      // Stuck, it may be re-priced meanwhile (the background sweep, an urgent claim behind it): a
      // copy of it mined is this deposit. Whatever is mined, the voucher is judged on the channel read after.
      const receipt = await waitForReceipt(this.chain, hash, this.chain.settlementTimeoutMs, (mined) =>
        this.store.isDepositAt(this.chain.chainId, { channelId, nonce: relayerNonce! }, mined.transactionHash),
      ).catch((error: unknown) => {
        if (isChainUnreachable(error)) return null;
        throw error;
      });
      if (!receipt) {
        keepLease = true;
        throw depositOnItsWay();
      }
      if (receipt.status !== 'success') {
        // A copy of ours landed first: the deposit is made. Made to revert by the payer: not relayed
        // again for a while. Mined too late: the payer moved nothing.
        const relayed = { channelId, payer: config.payer, nonce, amount: lease.amount, validBefore: lease.validBefore };
        const why = await onChain(() => whyDepositReverted(this.chain, batch, relayed, receipt.blockNumber));
        if (why === 'copy') return null;
        if (why === 'payer') await this.relayRefusals.refuse(this.chain.chainId, config.payer, receipt.transactionHash);
        throw new PaymentRejected(
          BATCH_REASONS.depositTransactionFailed,
          'The deposit transaction reverted; nothing was charged',
        );
      }
      return receipt.transactionHash;
    } finally {
      if (!keepLease) await this.store.endDepositLease(config.payer, lease.id);
    }
  }

  /**
   * Signs the deposit with the relayer's next nonce and broadcasts it, written down first (hash,
   * nonce, channel, payer and amount: channel_deposits) so that, stuck, it is re-priced as every other
   * relayer transaction is, and counted as the payer's money in flight; only while `leaseId` still
   * counts it and no copy of it is on its way at another relayer nonce (else nothing is sent:
   * DepositLeaseLost, DepositOnItsWay). `onRecorded` gets its nonce once it is written down: past it, it may have left.
   */
  private async sendDeposit(
    batch: BatchSettlementChain,
    deposit: Omit<DepositRecord, 'chainId' | 'txHash' | 'nonce'>,
    receiver: string,
    leaseId: string,
    data: Hex,
    onRecorded: (nonce: number) => void,
  ): Promise<Hash> {
    const call = await prepareRelayerCall(this.chain, batch.escrow, data);
    // In the receiver's turn, as its payments' settlements are.
    return broadcastFromRelayer(this.chain, call, { payee: receiver }, async (txHash, nonce) => {
      await this.store.recordDepositSent({ chainId: this.chain.chainId, ...deposit, txHash, nonce }, leaseId);
      onRecorded(nonce);
    });
  }

  /** The deposit run as the relayer would send it: refused (402) if it would revert. */
  private async simulateDeposit(batch: BatchSettlementChain, data: Hex): Promise<void> {
    try {
      await this.chain.publicClient.call({ account: this.chain.relayer.account.address, to: batch.escrow, data });
    } catch (error) {
      if (isChainUnreachable(error)) throw chainUnavailable();
      throw new PaymentRejected(
        BATCH_REASONS.depositSimulationFailed,
        `The deposit would revert: ${revertMessage(error).slice(0, 200)}`,
      );
    }
  }

  /**
   * Takes the payer's deposit lease for `lease`'s deposit, waiting a little for the one before to
   * land; what of the payer's USDC was in flight as it was taken (ChannelStore.takeDepositLease).
   */
  private async waitForDepositLease(lease: Parameters<ChannelStore['takeDepositLease']>[0]): Promise<MoneyInFlight[]> {
    const staleAfter = Math.max(DEPOSIT_LEASE_SECONDS, Math.ceil(this.chain.settlementTimeoutMs / 1000) + 60);
    const deadline = Date.now() + DEPOSIT_LEASE_WAIT_MS;
    for (;;) {
      // A turn held too long by the payer's claims is waited for as a lease held by another deposit.
      const ahead = await this.store.takeDepositLease(lease, staleAfter).catch((error: unknown) => {
        if (error instanceof PayerTurnBusy) return null;
        throw error;
      });
      if (ahead) return ahead;
      if (Date.now() >= deadline)
        throw new PaymentRejected(
          BATCH_REASONS.channelBusy,
          'Another deposit of this payer is in flight, or its payments are being recorded; send the payment again shortly',
        );
      await new Promise((resolve) => setTimeout(resolve, DEPOSIT_LEASE_POLL_MS));
    }
  }

  /** A relayer transaction of `payer`'s, keyed as its exact claims are (lower-case payer, the chain's token as the gates name it). */
  private payerKey(payer: string): PayerKey {
    return { chainId: this.chain.chainId, asset: this.chain.usdc, payer: payer.toLowerCase() };
  }

  /** Records the voucher as judged; null when the site's terms changed since `site` was read (nothing written). */
  private async record(
    gate: Gate,
    site: SitePaymentTerms,
    payment: BatchSettlementPayment,
    channelId: Hex,
    recorded: { row: ChannelRecord | null; charged: bigint },
    state: OnChainChannel,
    depositTx: Hash | null,
  ) {
    if (!(gate.exp > Date.now() / 1000)) throw notFound(GATE_NOT_FOUND);
    const { voucher, channelConfig: config } = payment;
    const { row, charged } = recorded;
    // A channel first seen, or one whose record is behind the chain's claims, gets its row raised
    // first; otherwise the row is as the voucher was judged against, and the move below checks it.
    if (row && row.charged < state.totalClaimed)
      // Only the receiver itself claims above what was charged here (x402's escrow lets it): a
      // voucher this API refused, taken from the payer for no page. Worth an operator's look.
      this.logger.warn(
        `channel ${channelId}: the escrow shows ${state.totalClaimed} claimed, above the ${row.charged} this API charged: its receiver ${config.receiver} claimed a voucher not taken here; vouchers go on from the chain's total`,
      );
    if (opensRow(row, state))
      await this.store.open(
        { channelId, chainId: this.chain.chainId, escrow: this.chain.batchSettlement!.escrow, config },
        state.totalClaimed,
      );
    // Signed by the secrets of the version the terms were read at: the record below takes the voucher
    // only while that version is still the site's, so a rotation meanwhile (which may have revoked the
    // secret) has the terms read again and the token signed anew, never a token of a revoked secret.
    // A site deleted since its terms were read has no secret: nothing is charged, as for a gate of a site gone.
    const token = await this.tokens
      .issue({
        gateId: gate.ref,
        siteId: gate.siteId,
        url: gate.path,
        kid: gate.kid,
        secretsVersion: site.secretsVersion,
      })
      .catch((error: unknown) => {
        throw error instanceof NoCurrentSecret ? notFound(GATE_NOT_FOUND) : error;
      });
    // The gate's secret, judged at the start, may have been given a short grace since (a rotation
    // read with the terms again): a token it signs would die within that grace, and the page be paid for nothing.
    assertSecretOutlastsSettlement(token, this.chain.settlementTimeoutMs);
    const paying: VoucherPaymentData = {
      ...gatePaymentFields(gate, site.publisherId),
      payer: config.payer.toLowerCase(),
      confirmedAt: new Date(),
      tokenKid: token.kid,
      tokenIssuedAt: token.issuedAt,
      tokenExpiresAt: token.expiresAt,
    };
    let result;
    try {
      result = await this.store.recordVoucher({
        channelId,
        expected: charged,
        cumulative: voucher.maxClaimableAmount,
        signature: voucher.signature.toLowerCase(),
        refundNonce: state.refundNonce,
        terms: site,
        payment: paying,
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Another request paid this gate, or took this very voucher, first; the channel did not move.
      const { channel: now, taken } = await this.store.voucherRecord(channelId, voucher.maxClaimableAmount);
      if (taken && (await answersGate(taken, gate, now, () => state))) return this.answerFor(taken, gate, channelId);
      throw conflict(taken ? 'This voucher already paid another page' : 'This gate is already paid with another proof');
    }
    if (result === 'terms-changed') return null;
    if (result === 'stale') {
      // Another voucher of this channel was accepted since this one was checked: this very one, for
      // this gate, sent twice at once (the same answer), or another (the corrective 402).
      const now = await this.store.voucherRecord(channelId, voucher.maxClaimableAmount);
      if (now.taken && (await answersGate(now.taken, gate, now.channel, () => state)))
        return this.answerFor(now.taken, gate, channelId);
      // A refund held it, or landed after this voucher's chain state was read: judged again, it may no longer fit.
      if (now.channel && (now.channel.refundHeld || now.channel.refundsThrough > state.refundNonce))
        throw refundInFlight();
      const base = now.channel?.charged ?? charged;
      throw correction(channelId, base, now.channel, state, base + gate.micros, voucher.maxClaimableAmount);
    }
    this.logger.debug?.(`voucher ${channelId} at ${voucher.maxClaimableAmount} paid gate ${gate.ref}`);
    const paid: VoucherPaid = {
      channel_id: channelId,
      charged_amount: gate.micros.toString(),
      channel_state: channelState(channelId, state, voucher.maxClaimableAmount),
      deposit_tx_hash: depositTx,
      deposit_amount: depositTx ? payment.deposit!.amount.toString() : null,
    };
    return { kind: 'paid' as const, body: this.paidView(paying, gate.id, paid, token) };
  }

  /** The answer for a voucher already taken: the same token for a gate of its page, 409 for another page's. */
  private async answerFor(
    taken: VoucherPayment,
    gate: Gate,
    channelId: Hex,
    chainRead?: Promise<OnChainChannel>,
  ): Promise<{ kind: 'paid'; body: PaidView }> {
    if (!isPaymentOfGate(taken, gate) && !isPaymentOfGatesPage(taken, gate))
      throw conflict('This voucher already paid another page');
    const batch = this.chain.batchSettlement!;
    const state = await (chainRead ?? this.readChannel(batch, channelId));
    const paid: VoucherPaid = {
      channel_id: channelId,
      charged_amount: taken.amount.toString(),
      channel_state: channelState(channelId, state, taken.cumulativeAmount),
      deposit_tx_hash: null,
      deposit_amount: null,
    };
    const token = await this.tokens
      .reissue(
        { gateId: taken.gateId, siteId: taken.siteId, url: taken.url },
        taken.tokenKid,
        taken.tokenIssuedAt,
        taken.tokenExpiresAt,
      )
      .catch(siteGoneAs410);
    return { kind: 'paid', body: this.paidView(taken, gate.id, paid, token) };
  }

  /** The answer for a voucher payment, with the token it was given. */
  private paidView(
    payment: Pick<VoucherPayment, 'url' | 'payer' | 'amount'>,
    gateId: string,
    paid: VoucherPaid,
    token: IssuedToken,
  ): PaidView {
    return {
      status: 'paid',
      access_token: token.token,
      expires_at: token.expiresAt.toISOString(),
      gate_id: gateId,
      url: payment.url,
      tx_hash: paid.deposit_tx_hash ?? '',
      payer: payment.payer,
      amount: payment.amount.toString(),
      price_usd: formatMicrosUsd(payment.amount),
      network: this.chain.network.name,
      batch_settlement: paid,
    };
  }
}

/**
 * Whether the voucher payment `taken` is answered for `gate`: made through it, or through another
 * gate of its page (sent again without naming its gate) while the token it bought lives and the
 * voucher is above the channel's public total: then only its payer and its site hold it. A public
 * one (a claim's calldata, the chain) proves nothing of who sends it: through a gate of a guessed
 * path it would open that page. One whose token expired bought nothing more: the gate asking now
 * is paid anew, the same total meeting the correction.
 */
async function answersGate(
  taken: VoucherPayment,
  gate: Gate,
  row: Pick<ChannelRecord, 'published'> | null,
  state: () => OnChainChannel | Promise<OnChainChannel>,
): Promise<boolean> {
  if (isPaymentOfGate(taken, gate)) return true;
  if (!isPaymentOfGatesPage(taken, gate) || taken.tokenExpiresAt.getTime() <= Date.now()) return false;
  return taken.cumulativeAmount > publicTotal(row, await state());
}

/** The last second a date holds in PostgreSQL and JavaScript alike, comfortably: 9999-12-31T23:59:59Z. */
const LAST_DATE_SECONDS = 253_402_300_799n;

/** When a deposit's authorization stops being valid (a uint256 of seconds; any beyond year 9999 read as then). */
function validBeforeOf(deposit: { erc3009: { validBefore: bigint } }): Date {
  const { validBefore } = deposit.erc3009;
  return new Date(Number(validBefore < LAST_DATE_SECONDS ? validBefore : LAST_DATE_SECONDS) * 1000);
}
