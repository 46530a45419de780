/*
 * The Crawlgate API's answers as the middleware reads them, through core's types of them (a field
 * renamed or retyped in core fails to compile here). An answer is used only when every field the
 * middleware passes on has the type core names and the form it needs (atomic amounts of digits, a
 * 32-byte channel id, a price fit for a header); otherwise it is undefined and the caller treats
 * the answer as unusable, never as a payment. Fields core does not name are dropped: they never
 * make an answer usable, and never reach the visitor.
 */

import {
  DOMAIN_PATTERN,
  hasFieldKinds,
  parsePriceUsd,
  type ApiErrorBody,
  type BatchSettlementOffer,
  type ChannelCorrection,
  type ChannelStateView,
  type FieldKinds,
  type PaidGate,
  type PaymentRejection,
  type PendingPayment,
  type RefundedChannel,
  type SiteOffer,
  type SiwxAccess,
  type UsableSecretView,
  type VoucherCorrection,
  type VoucherPaid,
  type VoucherStateView,
} from '@crawlgate/core';

const PAID: FieldKinds<PaidGate> = {
  status: ['string'],
  access_token: ['string'],
  expires_at: ['string'],
  gate_id: ['string'],
  url: ['string'],
  tx_hash: ['string'],
  payer: ['string'],
  amount: ['string'],
  price_usd: ['string'],
  network: ['string'],
  batch_settlement: ['object', 'undefined'],
};

const VOUCHER_PAID: FieldKinds<VoucherPaid> = {
  channel_id: ['string'],
  charged_amount: ['string'],
  channel_state: ['object'],
  deposit_tx_hash: ['string', 'null'],
  deposit_amount: ['string', 'null'],
};

const CHANNEL_STATE: FieldKinds<ChannelStateView> = {
  channelId: ['string'],
  balance: ['string'],
  totalClaimed: ['string'],
  withdrawRequestedAt: ['number'],
  refundNonce: ['string'],
  chargedCumulativeAmount: ['string'],
};

const VOUCHER_STATE: FieldKinds<VoucherStateView> = { signedMaxClaimable: ['string'], signature: ['string'] };

const REFUNDED: FieldKinds<RefundedChannel> = {
  status: ['string'],
  gate_id: ['string'],
  channel_id: ['string'],
  payer: ['string'],
  refund_amount: ['string'],
  refund_tx_hash: ['string'],
  network: ['string'],
  channel_state: ['object'],
};

const PENDING: FieldKinds<PendingPayment> = {
  status: ['string'],
  gate_id: ['string'],
  tx_hash: ['string', 'null'],
  detail: ['string'],
};

const REJECTION: FieldKinds<PaymentRejection> = {
  detail: ['string'],
  reason: ['string'],
  channel_state: ['object', 'undefined'],
  voucher_state: ['object', 'undefined'],
};

const ERROR: FieldKinds<ApiErrorBody> = { detail: ['string', 'array'] };

const SIWX: FieldKinds<SiwxAccess> = {
  access_token: ['string'],
  expires_at: ['string'],
  url: ['string'],
  payer: ['string'],
};

const SITE: FieldKinds<SiteOffer> = {
  site_id: ['string'],
  domain: ['string'],
  default_price_usd: ['string'],
  rules: ['array'],
  pricing_version: ['number'],
  network: ['string'],
  caip2: ['string'],
  chain_id: ['number'],
  asset: ['string'],
  x402_network: ['string'],
  asset_name: ['string'],
  asset_version: ['string'],
  pay_to: ['string', 'null'],
  gate_ttl_seconds: ['number'],
  access_token_ttl_seconds: ['number', 'undefined'],
  settlement_timeout_seconds: ['number'],
  max_url_length: ['number'],
  api_base_url: ['string'],
  batch_settlement: ['object', 'null', 'undefined'],
  // Its content is stored-bot-policy.ts's to read: an unreadable policy keeps the last good one.
  bot_policy: ['object', 'undefined'],
  usable_secrets: ['array', 'undefined'],
};

const BATCH_OFFER: FieldKinds<BatchSettlementOffer> = {
  escrow: ['string'],
  receiver_authorizer: ['string'],
  withdraw_delay_seconds: ['number'],
};

const RULE: FieldKinds<SiteOffer['rules'][number]> = { path: ['string'], price_usd: ['string'] };

/** The API lists a site's current secret and at most one in its grace period: a longer list is not its answer. */
const MAX_USABLE_SECRETS = 16;

const USABLE_SECRET: FieldKinds<UsableSecretView> = { fingerprint: ['string'], retires_at: ['string', 'null'] };

/** 200 of POST /v1/gates/{id}/verify: a payment of the gate asked about (`gateId`), with a token. */
export function paidGateOf(body: unknown, gateId: string): PaidGate | undefined {
  if (!hasFieldKinds<PaidGate>(body, PAID)) return undefined;
  const whole =
    body.status === 'paid' &&
    body.gate_id === gateId &&
    body.access_token !== '' &&
    isAtomic(body.amount) &&
    // It goes into the crawler-charged header as is.
    parsePriceUsd(body.price_usd).ok &&
    (body.batch_settlement === undefined || isVoucherPaid(body.batch_settlement));
  if (!whole) return undefined;
  const { batch_settlement: voucher, ...paid } = only(body, PAID);
  return voucher
    ? {
        ...paid,
        batch_settlement: { ...only(voucher, VOUCHER_PAID), channel_state: only(voucher.channel_state, CHANNEL_STATE) },
      }
    : paid;
}

/** 200 of POST /v1/gates/{id}/verify for a batch-settlement refund payload: the channel's rest went back to its payer. */
export function refundedOf(body: unknown, gateId: string): RefundedChannel | undefined {
  if (!hasFieldKinds<RefundedChannel>(body, REFUNDED)) return undefined;
  const whole =
    body.status === 'refunded' &&
    body.gate_id === gateId &&
    CHANNEL_ID.test(body.channel_id) &&
    isAtomic(body.refund_amount) &&
    TX_HASH.test(body.refund_tx_hash) &&
    isChannelState(body.channel_state);
  return whole ? { ...only(body, REFUNDED), channel_state: only(body.channel_state, CHANNEL_STATE) } : undefined;
}

/** 202 of POST /v1/gates/{id}/verify: the payment of the gate asked about is on its way. */
export function pendingOf(body: unknown, gateId: string): PendingPayment | undefined {
  return hasFieldKinds<PendingPayment>(body, PENDING) && body.status === 'settlement_pending' && body.gate_id === gateId
    ? only(body, PENDING)
    : undefined;
}

/** 402 of POST /v1/gates/{id}/verify: why the proof does not pay, and x402's correction when its channel state is whole. */
export function rejectionOf(
  body: unknown,
): { reason: string; detail: string; correction?: ChannelCorrection } | undefined {
  if (!hasFieldKinds<PaymentRejection>(body, REJECTION)) return undefined;
  const { reason, detail } = body;
  if (body.channel_state === undefined) return body.voucher_state === undefined ? { reason, detail } : undefined;
  const correction = correctionOf(body);
  return correction ? { reason, detail, correction } : undefined;
}

/** Whether `body` is the API's error answer (`{detail}`: a sentence, or a 422's list): not a proxy's page. */
export function isApiErrorBody(body: unknown): body is ApiErrorBody {
  return hasFieldKinds<ApiErrorBody>(body, ERROR);
}

/** An API error's body (409 and others): its detail, when a sentence. */
export function errorDetailOf(body: unknown): string | undefined {
  return isApiErrorBody(body) && typeof body.detail === 'string' ? body.detail : undefined;
}

/** A 503 body in which the API says the call took nothing (core's GateNotCharging): its detail. */
export function notChargingDetailOf(body: unknown): string | undefined {
  return (body as { charged?: unknown } | null | undefined)?.charged === false ? errorDetailOf(body) : undefined;
}

/** 200 of POST /v1/access-tokens/siwx: the paid token again. */
export function siwxAccessOf(body: unknown): SiwxAccess | undefined {
  return hasFieldKinds<SiwxAccess>(body, SIWX) && body.access_token !== '' ? only(body, SIWX) : undefined;
}

/** 200 of GET /v1/site: the site's terms, every field the middleware acts on of the type and form it needs. */
export function siteOfferOf(body: unknown): SiteOffer | undefined {
  if (!hasFieldKinds<SiteOffer>(body, SITE)) return undefined;
  const whole =
    DOMAIN_PATTERN.test(body.domain) &&
    parsePriceUsd(body.default_price_usd).ok &&
    body.rules.every((rule: unknown) => hasFieldKinds(rule, RULE) && parsePriceUsd(rule.price_usd).ok) &&
    [body.pricing_version, body.chain_id, body.gate_ttl_seconds, body.settlement_timeout_seconds].every(isCount) &&
    isCount(body.max_url_length) &&
    (body.access_token_ttl_seconds === undefined || isCount(body.access_token_ttl_seconds)) &&
    (body.batch_settlement === null ||
      body.batch_settlement === undefined ||
      (hasFieldKinds<BatchSettlementOffer>(body.batch_settlement, BATCH_OFFER) &&
        isCount(body.batch_settlement.withdraw_delay_seconds))) &&
    (body.usable_secrets === undefined ||
      (body.usable_secrets.length <= MAX_USABLE_SECRETS && body.usable_secrets.every(isUsableSecret)));
  if (!whole) return undefined;
  const offer = only(body, SITE);
  if (offer.usable_secrets) offer.usable_secrets = offer.usable_secrets.map((one) => only(one, USABLE_SECRET));
  return offer.batch_settlement ? { ...offer, batch_settlement: only(offer.batch_settlement, BATCH_OFFER) } : offer;
}

/** One of GET /v1/site's usable secrets: a fingerprint, and a retirement that reads as a date when there is one. */
function isUsableSecret(value: unknown): value is UsableSecretView {
  return (
    hasFieldKinds<UsableSecretView>(value, USABLE_SECRET) &&
    (value.retires_at === null || Number.isFinite(Date.parse(value.retires_at)))
  );
}

/** x402's corrective 402: passed on only whole, so a client checks and adopts exactly what the API counts. */
function correctionOf(body: PaymentRejection): ChannelCorrection | undefined {
  const { reason, channel_state: state, voucher_state: voucher } = body as VoucherCorrection;
  if (!isChannelState(state)) return undefined;
  const channelState = only(state, CHANNEL_STATE);
  if (voucher === undefined) return { reason, channelState };
  const whole = hasFieldKinds<VoucherStateView>(voucher, VOUCHER_STATE) && isAtomic(voucher.signedMaxClaimable);
  return whole && HEX.test(voucher.signature)
    ? { reason, channelState, voucherState: only(voucher, VOUCHER_STATE) }
    : undefined;
}

function isVoucherPaid(value: unknown): value is VoucherPaid {
  return (
    hasFieldKinds<VoucherPaid>(value, VOUCHER_PAID) &&
    isAtomic(value.charged_amount) &&
    (value.deposit_amount === null || isAtomic(value.deposit_amount)) &&
    isChannelState(value.channel_state)
  );
}

function isChannelState(value: unknown): value is ChannelStateView {
  return (
    hasFieldKinds<ChannelStateView>(value, CHANNEL_STATE) &&
    CHANNEL_ID.test(value.channelId) &&
    [value.balance, value.totalClaimed, value.refundNonce, value.chargedCumulativeAmount].every(isAtomic) &&
    isCount(value.withdrawRequestedAt)
  );
}

/** The fields of T a checked body holds, and no others: what a peer adds is never passed on. */
function only<T extends object>(body: T, kinds: FieldKinds<T>): T {
  const fields = (Object.keys(kinds) as (keyof T & string)[]).filter((key) => Object.hasOwn(body, key));
  return Object.fromEntries(fields.map((key) => [key, body[key]])) as T;
}

/** An amount in atomic units (or a nonce): a decimal string of digits. */
function isAtomic(value: string): boolean {
  return /^\d{1,78}$/.test(value);
}

function isCount(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;
const TX_HASH = CHANNEL_ID;
const HEX = /^0x[0-9a-fA-F]*$/;
