import { Inject, Injectable } from '@nestjs/common';
import {
  buildGateOffer,
  fitsAccessToken,
  MAX_TOKEN_PATH_BYTES,
  newGateRef,
  SECRET_SETTLEMENT_MARGIN_SECONDS,
  paymentRequiredHeader,
  readGate,
  readRoute,
  sha256Hex,
  signGate,
  verifyGate,
  type BatchSettlementTerms,
  type GateCheck,
  type GateOffer,
  type GateTerms,
  type PaymentTerms,
} from '@crawlgate/core';
import { isAddressEqual, type Address } from 'viem';
import type { SiteWithPayout } from '../auth/request-context';
import type { ChainContext } from '../chain/chain-context';
import { ownAddressRole } from '../chain/own-addresses';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import type { Database } from '../db/database';
import { CONFIG, DATABASE } from '../db/tokens';
import type { Payment } from '../generated/prisma/client';
import { ApiError, conflict, notFound } from '../http/api-error';
import { PricingService } from '../pricing/pricing.service';
import { PaymentStore } from '../payments/payment.store';
import { SitePaymentTermsStore, type SitePaymentTerms } from '../sites/site-payment-terms.store';
import { NoCurrentSecret, SiteSecretsService, type SiteSecret } from '../sites/site-secrets.service';
import { GateCounterService } from './gate-counter.service';

export const GATE_NOT_FOUND = 'Gate not found or expired';

/** 404 for a gate id no usable secret of its site signed (its client is counted: ForgedGateBudget); answered as any unknown gate. */
export class ForgedGate extends ApiError {
  constructor() {
    super(404, GATE_NOT_FOUND);
  }
}

/** The payment terms of a gate's site as they are now: a site deleted since has no gate to pay (404). */
export async function gateSiteTerms(
  sites: SitePaymentTermsStore,
  gate: Pick<GateTerms, 'siteId'>,
): Promise<SitePaymentTerms> {
  const site = await sites.get(gate.siteId);
  if (!site) throw notFound(GATE_NOT_FOUND);
  return site;
}

/** Whether a gate's terms are for this API's chain and asset: any other is refused unread. */
export function isGateOfChain(
  terms: Pick<GateTerms, 'chainId' | 'asset'>,
  chain: Pick<ChainContext, 'chainId' | 'usdc'>,
): boolean {
  return terms.chainId === chain.chainId && terms.asset.toLowerCase() === chain.usdc.toLowerCase();
}

/** A gate whose MAC checked out: its signed id and its terms. */
export interface Gate extends GateTerms {
  id: string;
  /**
   * The key id of the secret that signed it. Its payment's token is signed with the same secret
   * while that one verifies: a middleware still holding only the secret a rotation replaced (in its
   * grace period) mints such gates, and must be able to open the tokens they are paid with.
   */
  kid: string;
  /** When that secret stops verifying; null for the current one. */
  secretRetiresAt: Date | null;
}

/** Whether a secret retiring at `retiresAt` (null: the current one) still verifies once a payment sent now has settled. */
export function outlastsSettlement(retiresAt: Date | null, settlementTimeoutMs: number, now = Date.now()): boolean {
  return (
    retiresAt === null || retiresAt.getTime() >= now + settlementTimeoutMs + SECRET_SETTLEMENT_MARGIN_SECONDS * 1000
  );
}

/**
 * Nothing is taken for a gate whose secret retires before its payment could settle: the token
 * would be signed with another secret, which the middleware that minted the gate does not hold.
 * For payments where nothing has moved yet (an authorization, a voucher).
 */
export function assertSecretOutlastsSettlement(
  gate: Pick<Gate, 'secretRetiresAt'>,
  settlementTimeoutMs: number,
  now = Date.now(),
): void {
  if (!outlastsSettlement(gate.secretRetiresAt, settlementTimeoutMs, now))
    throw conflict(
      'This gate was signed with a secret that is being retired; nothing was charged. Ask the site for a fresh gate',
    );
}

/**
 * 409 for a gate about to be paid whose payTo is no longer its publisher's payout address (replaced,
 * say, after a wallet was lost, or removed): a gate minted before the change, by this API or by a
 * middleware that has not reloaded the site's terms yet, must not pay the old wallet. Asked before
 * anything is charged; a transfer already made is honoured as offered.
 */
export function assertPayeeStands(
  site: { payoutAddress: string | null },
  gate: Pick<Gate, 'payTo'>,
  chain: ChainContext,
): void {
  assertPaysNoOwnAddress(gate, chain);
  if (!payeeStands(site, gate.payTo, chain))
    throw conflict(
      'This gate pays a payout address its publisher has since replaced; nothing was charged. Ask for a fresh gate',
    );
}

/**
 * 409 for a gate whose payTo no payment may go to (ownAddressRole): minted before such payout
 * addresses were refused, by this API or a middleware from the site's terms.
 */
export function assertPaysNoOwnAddress(gate: Pick<Gate, 'payTo'>, chain: ChainContext): void {
  const unpayable = ownAddressRole(chain, gate.payTo);
  if (unpayable) throw conflict(`This gate pays ${unpayable}, which no payment may go to; nothing was charged`);
}

/**
 * 409 for a transfer to a gate's pay_to that was not its publisher's payout address when the
 * transfer was mined (PayoutAddressStore.wasPayoutAt): the money went to a wallet the publisher
 * disowned, maybe for a key lost to whoever sent it (from a second wallet of its own, to read for
 * the gas alone). One mined while it was paid the publisher's address of the time, in good faith.
 */
export const transferToReplacedPayee = () =>
  conflict(
    'This gate pays a payout address its publisher had replaced when this transfer was mined: it pays nothing here. Ask for a fresh gate',
  );

/**
 * How many times a payment is judged and recorded while its site's terms change under it: each
 * record holds the terms it was judged by, and refuses (writing nothing) when they changed since.
 */
export const TERMS_ATTEMPTS = 3;

/** 409 for a payment whose site's terms changed under each of its TERMS_ATTEMPTS records: nothing was charged. */
export const termsKeptChanging = () =>
  conflict('The site’s terms kept changing while this payment was recorded; nothing was charged: send it again');

/** 410 for a payment whose site was deleted since it was paid: its token cannot be issued, the payment stands. */
export const paidSiteGone = () =>
  new ApiError(410, 'This payment settled, but its site was deleted, so no access token can be issued');

/** A token's (re)issue failed for want of its site's secret: the site was deleted (410); any other failure as it was. */
export function siteGoneAs410(error: unknown): never {
  throw error instanceof NoCurrentSecret ? paidSiteGone() : error;
}

/**
 * Whether `payTo` is still the site's publisher's payout address (a site gone pays nobody), and
 * not one no payment may go to (ownAddressRole: named before such addresses were refused, and
 * still offered by a middleware minting gates from the site's terms).
 */
export function payeeStands(
  site: { payoutAddress: string | null } | null,
  payTo: string,
  chain: ChainContext,
): boolean {
  return (
    site !== null &&
    site.payoutAddress !== null &&
    isAddressEqual(site.payoutAddress as Address, payTo as Address) &&
    ownAddressRole(chain, payTo) === undefined
  );
}

/**
 * Whether `payment` was made through `gate`: its ref, its site, and the very id when the payment
 * recorded one (every payment since gate_id_sha256 does). A ref alone is not enough: refs are
 * public, and any publisher can sign a gate of its own site naming one.
 */
export function isPaymentOfGate(
  payment: { gateId: string; siteId: string; gateIdSha256?: string | null },
  gate: Pick<Gate, 'id' | 'ref' | 'siteId'>,
): boolean {
  return (
    payment.gateId === gate.ref &&
    payment.siteId === gate.siteId &&
    (payment.gateIdSha256 == null || payment.gateIdSha256 === sha256Hex(gate.id))
  );
}

/**
 * Whether `payment` was made for `gate`'s page: the same site and path, through whichever gate. A
 * payment sent again without naming its gate (its answer lost, or sent before any 402) is paid by
 * the middleware through a gate minted for it then; only a proof that no stranger can hold may be
 * answered so (the voucher rule: VoucherPaymentsService).
 */
export function isPaymentOfGatesPage(
  payment: { siteId: string; url: string },
  gate: Pick<Gate, 'siteId' | 'path'>,
): boolean {
  return payment.siteId === gate.siteId && payment.url === gate.path;
}

/** What a payment records of the gate it pays. */
export function gatePaymentFields(gate: Gate, publisherId: string) {
  return {
    gateId: gate.ref,
    gateIdSha256: sha256Hex(gate.id),
    siteId: gate.siteId,
    publisherId,
    url: gate.path,
    tokenKid: gate.kid,
    chainId: gate.chainId,
    asset: gate.asset,
    payTo: gate.payTo.toLowerCase(),
    amount: gate.micros,
  };
}

/**
 * Whether `payment` was made through this very gate id, whose MAC no longer verifies: its terms
 * are public (histories, calldata), its id only its payer was shown.
 */
function isPaymentThrough(payment: Payment, id: string, terms: GateTerms): boolean {
  return (
    // A plain comparison: knowing the digest gives no id that hashes to it.
    payment.gateIdSha256 === sha256Hex(id) &&
    payment.gateId === terms.ref &&
    payment.siteId === terms.siteId &&
    payment.url === terms.path &&
    BigInt(payment.amount) === terms.micros &&
    payment.chainId === terms.chainId &&
    payment.payTo === terms.payTo.toLowerCase()
  );
}

export type GateCreation =
  { kind: 'free'; url: string } | { kind: 'priced'; offer: GateOffer; paymentRequired: string };

/**
 * Gates are signed offers (core's signGate): minted here for POST /v1/gates, as the middleware mints
 * them locally, and checked (MAC under the site's secrets, this chain and token) whenever one is
 * read or paid. Nothing is written per gate but a counter; the payment row is the only state.
 */
@Injectable()
export class GatesService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly pricing: PricingService,
    private readonly secrets: SiteSecretsService,
    private readonly counter: GateCounterService,
    private readonly payments: PaymentStore,
    private readonly sites: SitePaymentTermsStore,
  ) {}

  /** How this API takes payments for a site, as gate offers state it. */
  paymentTerms(site: { batchSettlement: boolean }): PaymentTerms {
    const { network } = this.chain;
    const batchSettlement = site.batchSettlement ? batchSettlementTerms(this.chain) : undefined;
    return {
      network: network.name,
      x402Network: network.x402Network,
      caip2: network.caip2,
      assetName: this.chain.usdcName,
      assetVersion: this.chain.usdcVersion,
      ...(batchSettlement ? { batchSettlement } : {}),
    };
  }

  async create(site: SiteWithPayout, url: string, apiBaseUrl: string): Promise<GateCreation> {
    const route = readRoute(url);
    const path = route.path;
    assertTokenCanCarry(path);
    const micros = await this.pricing.priceOfRoute(site, route);
    if (micros === 0n) return { kind: 'free', url: path };
    const payTo = site.publisher.payoutAddress;
    if (!payTo)
      throw conflict(
        'This site cannot charge yet: its publisher has no payout address (set payout_address with PATCH /v1/publishers/me)',
      );
    // Named before such addresses were refused (publishers.service): paid, the money would be lost.
    const unpayable = ownAddressRole(this.chain, payTo);
    if (unpayable)
      throw conflict(
        `This site cannot charge: its publisher's payout address is ${unpayable}, which no payment may go to (set another payout_address with PATCH /v1/publishers/me)`,
      );
    const now = Math.floor(Date.now() / 1000);
    const gate: GateTerms = {
      siteId: site.id,
      ref: newGateRef(),
      path,
      micros,
      chainId: this.chain.chainId,
      asset: this.chain.usdc,
      payTo: payTo as `0x${string}`,
      iat: now,
      exp: now + this.config.gateTtlSeconds,
    };
    const id = signGate(gate, (await this.secrets.current(site.id, site.secretsVersion)).secret);
    // `resource` names the site's own domain whatever host the caller wrote.
    const offer = buildGateOffer(id, gate, this.paymentTerms(site), {
      domain: site.domain,
      apiBaseUrl,
      pathAndQuery: pathAndQuery(url),
      now,
    });
    // Counted once offered: a request failing before gives no gate.
    this.counter.count(site.id);
    return { kind: 'priced', offer, paymentRequired: paymentRequiredHeader(offer, this.chain.network.caip2) };
  }

  /**
   * A gate that can still be paid, or that a payment holds: unknown, forged, tampered, another
   * chain's, and expired-and-unpaid are 404 alike (`transferProof`: an expired one is returned, for
   * a transfer proof that checkTransfer judges by the block its transfer was mined in). `site`: the
   * site's payment terms read at the start, its secrets' version among them (null for a site
   * deleted), so that a payment judged now needs not read them again.
   */
  async findLive(
    id: string,
    { transferProof = false } = {},
  ): Promise<{ gate: Gate; payment: Payment | null; site: SitePaymentTerms | null }> {
    const terms = readGate(id);
    if (!terms || !isGateOfChain(terms, this.chain)) throw notFound(GATE_NOT_FOUND);
    // A deleted site has no secrets (404 below); a database error is the database's (503), not a verdict on the gate.
    // The gate's payment is read beside the site: every answer below but a gate too long for a token reads it.
    const paymentRead = this.payments.byGate(terms.ref);
    paymentRead.catch(() => undefined); // awaited below; a refusal before that must not leave its failure unhandled
    const site = await this.sites.get(terms.siteId);
    let check: GateCheck = { valid: false, reason: 'bad_signature' };
    let signer: SiteSecret | undefined;
    for (const secret of site ? await this.secrets.usable(terms.siteId, site.secretsVersion) : []) {
      check = verifyGate(id, { secret: secret.secret, siteId: terms.siteId });
      signer = secret;
      if (check.valid || check.reason === 'expired') break;
    }
    if (!check.valid && check.reason !== 'expired') {
      // A paid gate whose secret was revoked, or retired, since: still answered to its payer (the
      // same proof gets its payment; no other proof pays it), when it is the very id paid through.
      // Read again when the first read found nothing: the payment may have landed between it and a
      // revocation the secrets' read then saw.
      const held =
        check.reason === 'bad_signature' ? ((await paymentRead) ?? (await this.payments.byGate(terms.ref))) : null;
      if (!held || !isPaymentThrough(held, id, terms)) throw new ForgedGate();
      // A secret retired long ago: should anything reach a new claim, it is refused.
      const gate = { ...terms, asset: this.chain.usdc, id, kid: held.tokenKid ?? '', secretRetiresAt: new Date(0) };
      return { gate, payment: held, site };
    }
    // A gate minted by a middleware that does not bound paths: no payment for a token that could not be issued.
    assertTokenCanCarry(terms.path);
    const payment = await paymentRead;
    // A ref held by another gate's payment: the ref is public, and any publisher can sign a gate of
    // its own site naming it. Never that payment's gate (its token, its hash), and never payable.
    if (payment && !isPaymentOfGate(payment, { ...terms, id })) throw notFound(GATE_NOT_FOUND);
    // Expired, yet paid or being paid: the payer may still ask for its result. For a transfer proof,
    // expired and unpaid too: the transfer is judged by when it was mined (checkTransfer), since a
    // transfer mined in time may be confirmed, or its proof arrive, only after the gate expired.
    if (!check.valid && !payment && !transferProof) throw notFound(GATE_NOT_FOUND);
    // The chain's own spelling of the asset, as payments have always stored it.
    const gate = { ...terms, asset: this.chain.usdc, id, kid: signer!.kid, secretRetiresAt: signer!.retiresAt };
    return { gate, payment, site };
  }

  async view(id: string, apiBaseUrl: string): Promise<GateOffer & { paid_at: string | null; tx_hash: string | null }> {
    const { gate, payment } = await this.findLive(id);
    const site = await this.db.prisma.site.findUnique({
      where: { id: gate.siteId },
      select: { domain: true, batchSettlement: true },
    });
    const status = !payment ? 'open' : payment.status === 'confirmed' ? 'paid' : 'settling';
    const offer = buildGateOffer(id, gate, this.paymentTerms({ batchSettlement: site?.batchSettlement ?? false }), {
      domain: site?.domain ?? '',
      apiBaseUrl,
      status,
    });
    const paid = payment?.status === 'confirmed';
    return {
      ...offer,
      paid_at: paid ? (payment.confirmedAt?.toISOString() ?? null) : null,
      tx_hash: paid ? payment.txHash : null,
    };
  }
}

/** The channel terms of this API's gates, when it can take vouchers at all. */
export function batchSettlementTerms(chain: ChainContext): BatchSettlementTerms | undefined {
  const batch = chain.batchSettlement;
  return batch
    ? { escrow: batch.escrow, receiverAuthorizer: batch.authorizer.address, withdrawDelay: batch.withdrawDelaySeconds }
    : undefined;
}

/** 414 for a path no access token could carry (MAX_TOKEN_PATH_BYTES): such a path is never gated, so never paid. */
function assertTokenCanCarry(path: string): void {
  if (!fitsAccessToken(path))
    throw new ApiError(
      414,
      `The path is longer than ${MAX_TOKEN_PATH_BYTES} bytes (UTF-8, as JSON): no access token can carry it, so it cannot be sold`,
    );
}

/** Path and query of a gate URL (a path, or an absolute URL whose host is not kept). */
function pathAndQuery(url: string): string {
  if (url.startsWith('/')) return url;
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}
