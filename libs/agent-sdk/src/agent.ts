import {
  BATCH_REASONS,
  BATCH_SETTLEMENT_SCHEME,
  cappedJson,
  decodeBase64Json,
  encodeBase64Json,
  formatMicrosUsd,
  formatWalletProof,
  isLoopbackHost,
  MAX_ACCESS_TOKEN_TTL_SECONDS,
  MAX_AUTHORIZATION_SECONDS,
  MAX_PAYMENT_ANSWER_BYTES,
  MAX_PAYMENT_ANSWER_MS,
  MAX_PRICE_MICROS,
  parseUsdAmount,
  paymentHistoryMessage,
  readGate,
  rememberLast,
  requestPath,
  WALLET_PROOF_HEADER,
  WALLET_PROOF_MAX_SECONDS,
  X402_BATCH_SETTLEMENT_ADDRESS,
  X402_REASONS,
  type AgentPaymentPage,
  type AgentProfile,
  type Hex,
  type PageQuery,
  type VerifyPaymentRequest,
} from '@crawlgate/core';
import { isHash, type Hash, type LocalAccount, type PublicClient, type WalletClient } from 'viem';
import {
  errorDetailOf,
  isAgentPaymentPage,
  isAgentProfile,
  refusalOf,
  settlementIn,
  settlementOf,
  verifyAnswerOf,
} from './answers';
import { Budget, type BudgetSummary } from './budget';
import type { BudgetStore } from './budget-store';
import { allowList, chooseOffer, firstAllowed, type AllowedNetwork } from './allow-list';
import {
  authorizationOfHeader,
  finalStateOf,
  HELD_PAGE_MARGIN_MS,
  HeldPages,
  heldAuthorizations,
  keepRefusedPayment,
  MAX_REFUSED_PAYMENTS,
  siteGroupsOf,
  type HeldAuthorization,
  type HeldOutcome,
  type RefusedPayment,
} from './held-authorizations';
import { PaymentSlots } from './payment-slots';
import { SiteSpend } from './site-spend';
import { KeptByPage } from './kept-by-page';
import { openChannelFile } from './channel-file';
import {
  ChannelBook,
  checkedCorrection,
  depositNonce,
  escrowChannelOf,
  lowerDeposited,
  markAnswered,
  markCharged,
  markUnanswered,
  newChannel,
  pageVouchers,
  signDeposit,
  signVoucher,
  type Channel,
  type PageVouchers,
} from './channels';
import { refusedDeposits, REUSE_MARGIN_SECONDS, type SentDeposit } from './refused-deposits';
import {
  BudgetExceededError,
  SiteBudgetExceededError,
  InsecureConnectionError,
  PaymentFailedError,
  PriceTooHighError,
  UnsupportedPaymentError,
} from './errors';
import { exactOffers, offerAhead, paidGateRef, readOffers, type Offer } from './offers';
import { refundedBy } from './refunds';
import { createPayer, TransferNotSent, TransferReverted, type SentTransfer } from './payer';
import { carriesPayment, firstHop, follow, isPlainHttpOffLoopback, type Followed, type Hop } from './redirects';
import { graceAfter, untilAborted } from './abort';
import { TokenCache, tokenBoughtAt, type PaidAt } from './token-cache';
import {
  gateOfPendingAnswer,
  isUnanswered,
  fullRoomText,
  PaymentsInDoubt,
  gateHoldUntil,
  neverCharged,
  tookNothing,
  type LostVoucher,
  type UnconfirmedAuthorization,
  type UnprovenTransfer,
} from './payments-in-doubt';
import { markingUnsent, wasUnsent } from './unsent';
import { receiptUntil, Receipts } from './receipts';
import { TokenLives } from './token-lives';
import { awaitsResend, resendWhileUnconfirmed, voucherAnswerOf, waitBeforeResendMs } from './voucher-answers';
import { webBotAuthHopSigner, type WebBotAuthOptions } from './web-bot-auth';
import { finalizeWithdrawals, initiateWithdrawals, type WithdrawalStep } from './withdrawals';

export interface AgentOptions {
  /** The wallet that pays: a viem LocalAccount (e.g. privateKeyToAccount) or a WalletClient with an account. */
  account: LocalAccount | WalletClient;
  /** The most the agent pays for one page, in USD (at most 1). */
  maxPriceUsd: string | number;
  /** The most the agent pays in total, in USD (counted in `budgetStore` when given). */
  budgetUsd: string | number;
  /**
   * The most one site takes in exact payments, in USD, while this agent runs (a site: a domain, its
   * last two labels; an IP address): a page of a site past it is refused (SiteBudgetExceededError),
   * the rest of the budget kept for others. Default: no cap but the budget. Counted in this process,
   * not in `budgetStore`. Not yet for voucher payments: it cannot be set beside `batchSettlement`.
   */
  maxSpendPerSiteUsd?: string | number;
  /**
   * Where spending is kept: default this process's memory. createFileBudgetStore(path) shares one
   * budget between processes and keeps it across restarts; any BudgetStore of your own works.
   */
  budgetStore?: BudgetStore;
  /**
   * What the agent pays with; offers in any other network, token or EIP-712 domain are ignored.
   * Default: USDC on "base" and "base-sepolia". The local devchain's USDC is deployed at run time:
   * allow it as `{ network: 'local', asset: '0x…' }`.
   */
  networks?: AllowedNetwork[];
  /** The longest a signed authorization stays valid, in seconds: 10 to 300 (default 300), whatever the site asks. */
  maxAuthorizationSeconds?: number;
  /** "authorization" (default): sign EIP-3009 and let the site settle; "transfer": send USDC, then post its hash signed for the gate (Crawlgate sites). */
  payMode?: 'authorization' | 'transfer';
  /**
   * Pay for pages that came over plain http from hosts off loopback (directly or through a
   * redirect). Default false: anyone on the network between could rewrite such a 402 to name
   * their own payTo, so the agent refuses it (InsecureConnectionError). Plain http on loopback is
   * paid either way (a local set-up).
   */
  payOverHttp?: boolean;
  /** JSON-RPC endpoint; needed for payMode "transfer" with a LocalAccount. */
  rpcUrl?: string;
  /** Crawlgate API base URL for profile() and payments(); learned from the first Crawlgate 402 when unset. */
  apiUrl?: string;
  /** Called after every payment. */
  onPayment?: (payment: PaymentEvent) => void;
  /**
   * Called when an exact payment left the agent and the fetch fails with no payment confirmed:
   * the site refused it but holds the signed authorization, or the answer never came; or when the
   * fetch resolves with a failure (a 5xx, 408 or 429) that no gate's API answers a token for. In
   * the async context of the fetch that paid (as onPayment), before that fetch settles.
   */
  onUnconfirmedPayment?: (payment: UnconfirmedPaymentEvent) => void;
  fetch?: typeof fetch;
  /** How often to poll for a transfer's receipt. */
  pollingIntervalMs?: number;
  /**
   * Sign every request (Web Bot Auth: RFC 9421, Ed25519): sites that verify it know this agent
   * whatever its User-Agent. A price header the request carries is signed too. Each signature is
   * made for one request to one URL (redirects included) and never sent again. Requests over plain
   * http off loopback are not signed (unless payOverHttp: a network you trust): the signature would
   * be readable on the way, and covers no scheme.
   */
  webBotAuth?: WebBotAuthOptions;
  /**
   * Off unless set. Pay sites that offer x402 `batch-settlement` (in an allowed network and token)
   * with vouchers: the first page opens a channel with a deposit of `depositUsd` (or what is left of
   * the budget, when less; at least the page), counted as spent at once; later pages are signed
   * vouchers against it, and a short channel gets a new deposit. Sites offering only `exact` are
   * paid as before. `withdraw…` takes back what the vouchers did not spend.
   */
  batchSettlement?: BatchSettlementOptions;
}

export interface BatchSettlementOptions {
  /** How much one deposit puts in escrow, in USD. */
  depositUsd: string | number;
  /** The escrow contracts the agent deposits into; default x402's (where `@x402/evm` expects it). */
  escrows?: `0x${string}`[];
  /**
   * The most channels holding deposits at once, across all sites (default 4; a whole number from 1).
   * A page that would open one more is paid with the site's `exact` offer when it has one the agent
   * may pay, else refused (PaymentFailedError `channel_limit`); pages of the channels held keep paying
   * by voucher. A channel refunded in full, or being withdrawn, holds no place; those of `channelFile` do.
   */
  maxChannels?: number;
  /**
   * A JSON file that keeps the channels across restarts: a restarted agent pays on them and can
   * withdraw from them. Held by one running process at a time. Without it, channels live in memory only.
   */
  channelFile?: string;
  /**
   * Off unless true. Once an origin's channel has paid a page by voucher, each new page of that
   * origin is sent with its voucher already (x402 v2, naming no gate, at the last price the origin
   * charged): one round trip a page instead of the 402's and the paid request's. A page priced
   * otherwise gets the site's correction and is paid at its own price; a free page serves without
   * charging it (the next page then pays that same total). Only while the channel covers the page
   * and every voucher it sent was answered: otherwise the page is asked for first, as without it.
   */
  payAhead?: boolean;
}

export interface PaymentEvent {
  url: string;
  priceUsd: string;
  amount: string;
  network: string;
  payer: string;
  txHash: string | null;
  /** "voucher": paid with a batch-settlement voucher (txHash is then its deposit's, or null). */
  mode: 'authorization' | 'transfer' | 'voucher';
  /** Voucher payments: the channel drawn on. */
  channelId?: string;
  /** Set when onUnconfirmedPayment reported this payment before (for that URL, with that status): confirmed now, it is not another. */
  confirms?: Pick<UnconfirmedPaymentEvent, 'url' | 'status'>;
}

/** An exact payment that left the agent without being confirmed (onUnconfirmedPayment). */
export interface UnconfirmedPaymentEvent {
  url: string;
  priceUsd: string;
  amount: string;
  network: string;
  payTo: string;
  payer: string;
  mode: 'authorization' | 'transfer';
  /**
   * "held": the site refused it but holds a signed authorization it could settle until it
   * expires; reserved in the budget (not spent) until the chain says what became of it.
   * "unknown": it went out (or may have) and no answer says whether it was taken; counted as spent.
   */
  status: 'held' | 'unknown';
}

/** A batch-settlement channel as the agent keeps it; amounts in atomic units (micro-USD). */
export interface ChannelSummary {
  channelId: Hex;
  origin: string;
  receiver: Hex;
  escrow: Hex;
  deposited: bigint;
  charged: bigint;
  withdrawing: boolean;
}

/** fetch's options, and a limit of this request's own. */
export interface AgentRequestInit extends RequestInit {
  /**
   * The most this request may pay for its page, in USD: a limit below `maxPriceUsd` for one
   * request (to hold a payment to a price quoted before, say). A higher one changes nothing.
   */
  maxPriceUsd?: string | number;
}

export interface Agent {
  /** fetch, except that a 402 within the limits is paid and the request retried. */
  fetch(input: string | URL | Request, init?: AgentRequestInit): Promise<Response>;
  /** Spending as this process last saw it in the budget store (no I/O). */
  spent(): BudgetSummary;
  /** Spending read from the budget store now, other processes' included. */
  spending(): Promise<BudgetSummary>;
  /** GET /v1/agents/me: this wallet's payment totals, as the Crawlgate API counts them. */
  profile(): Promise<AgentProfile>;
  /** GET /v1/agents/me/payments: this wallet's confirmed payments, newest first, a page at a time; each call signs a proof that the agent holds the wallet (X-Wallet-Proof). */
  payments(query?: PageQuery): Promise<AgentPaymentPage>;
  /** The batch-settlement channels this agent opened (in this process). */
  channels(): ChannelSummary[];
  /** Starts taking back what the vouchers did not spend, on every channel of the node's chain; those channels take no more vouchers. Needs rpcUrl (or a WalletClient) and gas. */
  initiateWithdraw(): Promise<WithdrawalStep[]>;
  /** Finishes the started withdrawals once each channel's withdrawDelay has passed (throws before). */
  finalizeWithdraw(): Promise<WithdrawalStep[]>;
  /**
   * x402's cooperative refund: asks the site at `url` to give back at once what this agent's
   * channel with it holds beyond what the site charged (or `amountUsd` of it), instead of waiting
   * out the withdraw delay. The channel stays open. What came back is read from the refund's
   * transaction on chain and taken off what the budget counts as spent. Needs rpcUrl (or a
   * WalletClient); the site pays the gas.
   */
  refund(url: string, options?: { amountUsd?: string | number; signal?: AbortSignal }): Promise<WithdrawalStep>;
  /**
   * Ends the reservations of authorizations sites refused, and of deposits whose answer never came,
   * once each has expired by the chain's clock: freed when unused (such a deposit then leaves its
   * channel's count), spent when a site settled it anyway. Exact payments whose answer never came,
   * counted as spent when sent, get their price back (freed) when the chain shows them unused; used,
   * they count in `spent` too, which then adds nothing to spending(). Runs by itself
   * after each one's validBefore; needs rpcUrl (or a WalletClient), else they stay as they are.
   */
  settleRefused(): Promise<HeldOutcome>;
  /**
   * Lets go of what the agent holds for its process's life: its channel file, which another agent
   * (of this process or another) may open after this. The agent pays no more vouchers afterwards;
   * without a channel file, it changes nothing.
   */
  close(): void;
}

const TOKEN_HEADER = 'x-crawlgate-token';
/**
 * Sends the page's request again with `extra` (a payment, or the token it bought): `answer` is the
 * answer to that request, a redirect included (what the payment bought: its settlement, its
 * token); `response`, where its redirects ended, is what the caller gets. `sentBefore`: the payment
 * it carries left before (a resend), so it goes whatever the caller's signal.
 */
type Retry = (
  extra: Record<string, string>,
  options?: SendOptions,
) => Promise<Pick<Followed, 'answer' | 'response' | 'plainHttp'>>;
interface SendOptions {
  sentBefore?: boolean;
}
const MAX_BUDGET_MICROS = 1_000_000_000_000n; // 1,000,000 USD: a sanity bound, not a policy
const PENDING_RETRIES = 6;
/**
 * What the gate's API answers a payment it refuses for good, nothing charged: invalid, failed, its
 * gate unknown or expired unpaid. Not 409 (the proof paid another gate, a v1 payment's gate minted
 * at the site) nor 410 (settled, its site deleted): money may have moved.
 */
const API_REFUSALS = new Set([400, 402, 404, 422]);
/**
 * A payment header as posted to its gate's verify_url; `recordedOnly`: answered only if the API
 * recorded that payment, so the question never starts a settlement.
 */
const paymentBody = (header: string, { recordedOnly = false } = {}) =>
  JSON.stringify({ payment: decodeBase64Json(header), ...(recordedOnly && { recorded_only: true }) });
/**
 * Each post to a gate's verify_url. The API waits up to its settlement timeout (30 s by default)
 * before it answers 202; a post given up sooner would lose the token a payment bought.
 */
const VERIFY_POST_TIMEOUT_MS = 90_000;
/** How long a payment goes on sending and reading once its caller gave up: as long as a post to verify_url may. */
const PAID_ANSWER_GRACE_MS = VERIFY_POST_TIMEOUT_MS;
/** Corrective 402s followed for one page: a consistent site needs one. */
const MAX_CORRECTIONS = 2;
/** Channels with deposits one origin may have: a new set of terms from it beyond that is refused. */
const MAX_CHANNELS_PER_ORIGIN = 2;
/**
 * Channels with deposits the agent holds across origins unless told: a few sites paid by voucher at
 * once, while one site sending the agent to many origins of its own (wildcard DNS) locks at most 4
 * deposits in escrow, not the whole budget (each comes back only after a withdraw delay).
 */
const DEFAULT_MAX_CHANNELS = 4;
/** A page paid ahead (batchSettlement.payAhead): no 402 asked for it, the offer its voucher goes with. */
interface PaidAhead {
  ahead: Offer;
}
/** Whether a page's challenge is the offer it is paid ahead with (a Response may be another fetch's class: no instanceof). */
const isPaidAhead = (challenge: Response | PaidAhead): challenge is PaidAhead => 'ahead' in challenge;
/** Lets a page's challenge go: a 402's body is cancelled (its connection freed), an offer paid ahead has none. */
const letGo = async (challenge: Response | PaidAhead) => {
  if (!isPaidAhead(challenge)) await challenge.body?.cancel().catch(() => undefined);
};
/**
 * A page not paid ahead after all (payByVoucher, pay): its channel no longer covers it as it stands
 * (nothing sent), the site refused its voucher without a correction to follow, or the voucher's
 * answer led elsewhere to a 402 (a redirect in front of the gate). The page is fetched again,
 * asked for first, as without payAhead.
 */
const ASK_FIRST = Symbol('ask first');
/** Origins whose last charged voucher offer is remembered to pay their next pages ahead with. */
const MAX_ORIGINS_PAID_AHEAD = 1024;
/** payByVoucher's answer when the page would open a channel beyond batchSettlement.maxChannels. */
const NO_CHANNEL_PLACE = Symbol('no channel place');
/** A payment's gate API had nothing to say of it (no verify_url, a refusal, no answer). */
const UNSAID = Symbol('unsaid');
/**
 * The shortest deposit authorization signed: a refused one is resent for the channel's next page
 * while it has REUSE_MARGIN_SECONDS left, and one too short for that would be signed anew on every
 * page, each held by the site and reserved until it expires.
 */
const MIN_DEPOSIT_SECONDS = 2 * REUSE_MARGIN_SECONDS;
/** Verifiers refuse an authorization expiring within 6 s; leave room for the round trip. */
const MIN_AUTHORIZATION_SECONDS = 10;
/**
 * What a fetch paying for a page leaves the fetches of that page waiting on it: the token its
 * payment bought, or the error of a payment that went through (or may have) with no token to show.
 */
interface Shared {
  token?: string;
  spent?: { error: unknown };
}

/**
 * One line for agent builders: `const agent = createAgent({ account, maxPriceUsd: '0.05', budgetUsd: '1' })`,
 * then `agent.fetch(url)`. Pays x402 v1/v2 402s within the limits, reuses tokens until they expire,
 * and pays once for concurrent fetches of one page.
 */
export function createAgent(options: AgentOptions): Agent {
  const maxPrice = amount(options.maxPriceUsd, MAX_PRICE_MICROS, 'maxPriceUsd');
  const budget = new Budget(amount(options.budgetUsd, MAX_BUDGET_MICROS, 'budgetUsd'), options.budgetStore);
  const siteSpend = new SiteSpend(
    options.maxSpendPerSiteUsd === undefined
      ? undefined
      : amount(options.maxSpendPerSiteUsd, MAX_BUDGET_MICROS, 'maxSpendPerSiteUsd'),
  );
  const mode = options.payMode ?? 'authorization';
  const allowed = allowList(options.networks);
  const maxAuthorizationSeconds = authorizationCap(options.maxAuthorizationSeconds);
  const payer = createPayer(options.account, {
    rpcUrl: options.rpcUrl,
    pollingIntervalMs: options.pollingIntervalMs ?? 250,
    maxAuthorizationSeconds,
  });
  let chainClient: PublicClient | null | undefined;
  /** The chain client, when the agent has one (rpcUrl or a WalletClient): it reads what became of authorizations. */
  const chainOf = () => {
    if (chainClient === undefined) {
      try {
        chainClient = payer.chain().public;
      } catch {
        chainClient = null;
      }
    }
    return chainClient ?? undefined;
  };
  // Reads refused authorizations' fate on chain.
  const held = heldAuthorizations(budget, chainOf);
  const batch = batchOptions(options.batchSettlement);
  if (batch && options.maxSpendPerSiteUsd !== undefined)
    throw new RangeError(
      'maxSpendPerSiteUsd: not counted for voucher payments yet, so it cannot be set beside batchSettlement (a site offering only vouchers would take the whole budget)',
    );
  if (batch && maxAuthorizationSeconds < MIN_DEPOSIT_SECONDS)
    throw new RangeError(
      `maxAuthorizationSeconds: batchSettlement signs deposits valid ${MIN_DEPOSIT_SECONDS} s at least, got ${maxAuthorizationSeconds}`,
    );
  /** A deposit's authorization as the held authorizations watch it: settled as the chain says. */
  const heldDeposit = (channel: Channel, deposit: SentDeposit, onFreed?: () => void): HeldAuthorization => ({
    reservation: deposit.reservation,
    chainId: channel.domain.chainId,
    asset: channel.config.token,
    from: channel.config.payer,
    nonce: depositNonce(channel.channelId, deposit.payload.authorization.erc3009Authorization.salt),
    validBefore: deposit.validBefore,
    onFreed,
  });
  // A refused deposit no longer worth resending is settled as the chain says, as a refused authorization is.
  const refused = refusedDeposits((channel, deposit) => held.add(heldDeposit(channel, deposit)));
  /** Channels whose deposits were counted again from their escrow (countsDepositsNeverMade): once each. */
  const lowered = new WeakSet<Channel>();
  /** New channels whose first deposit is on its way: each takes one of its origin's places meanwhile. */
  const opening = new Set<Channel>();
  /** Holds a deposit beyond its charges, may come to (a refused one the site keeps), or is opening. */
  const holds = (c: Channel) => c.deposited > c.charged || refused.has(c) || opening.has(c);
  /** The channels of `origin` that hold (a channel being withdrawn is coming back already). */
  const channelsHolding = (origin: string) => channels.ofOrigin(origin).filter(holds).length;
  /** The channels of every origin that hold. */
  const channelsHoldingAnywhere = () => channels.all().filter((c) => !c.withdrawing && holds(c)).length;
  /** A channel opened for this page that holds nothing after all: not kept. */
  const forgetIfEmpty = (key: string, channel: Channel) => {
    if (channel.deposited === 0n && channel.signed === 0n && !refused.has(channel)) channels.forget(key, channel);
  };
  const http = options.fetch ?? globalThis.fetch;
  const tokens = new TokenCache();
  /** How long each site's tokens live, from those it sold: a payment in doubt is asked about that long. */
  const tokenLives = new TokenLives();
  /**
   * When a token of `page`'s site issued at `from` would expire, by the longest life its tokens
   * were seen to have (the default at least): read at each check, so that a life learned since a
   * payment was sent keeps its page waiting longer, never shorter.
   */
  const tokenExpiryFrom = (from: number, page: string) => from + tokenLives.lifeMs(TokenCache.hostOf(page));
  /** An authorization's until, lengthened by a longer life of its site's tokens learned since it was sent. */
  const tokenEndOf = (earlier: UnconfirmedAuthorization, page: string) =>
    earlier.tokenFrom === undefined ? earlier.until : Math.max(earlier.until, tokenExpiryFrom(earlier.tokenFrom, page));
  /** When an authorization is let go: tokenEndOf, or once its verify_url refused it a minute past its validBefore. */
  const endOf = (earlier: UnconfirmedAuthorization, page: string) =>
    earlier.refused ? Math.min(earlier.until, authorizationOverAt(earlier)) : tokenEndOf(earlier, page);
  /** LostVoucher.over, lengthened by a longer life of its site's tokens learned since it was sent. */
  const overOf = (lost: LostVoucher, pageKey: string) => Math.max(lost.over, tokenExpiryFrom(lost.until, pageKey));
  // Kept past their hold, until their page is asked about again: their gate's API still answers a
  // payment it took after the gate expired, and only a refusal then frees the page.
  const unproven = new PaymentsInDoubt<UnprovenTransfer>(true);
  const heldPages = new HeldPages();
  const slots = new PaymentSlots();
  // Kept past their hold until their page is paid anew, asked about first: past the life its site's
  // tokens were seen to have too, asked once more (a front may have kept every token of its site
  // from this agent), until the longest a token its settlement bought could live.
  const refusedPayments = new KeptByPage<RefusedPayment>(
    (refused) => Number(refused.authorization.validBefore) * 1000 + MAX_ACCESS_TOKEN_TTL_SECONDS * 1000,
    MAX_REFUSED_PAYMENTS,
    siteGroupsOf,
  );
  // Kept past their until too: the token a lost payment bought may outlive the default half hour
  // (an API issuing longer ones), and only its gate's API can say; asked once more before the page is paid anew.
  // Each held, and counted against the limits, as long as a token it bought could live, by the
  // life its site's tokens were seen to have when asked (learned since it was sent, too); once its
  // verify_url refused it, counted until its authorization is over, its page held until the chain
  // says what became of it where the agent can read it (boughtEarlier).
  const unconfirmed = new PaymentsInDoubt<UnconfirmedAuthorization>(true, (page, earlier) => endOf(earlier, page));
  // Counted until their gate's hold ends; each holds its page longer (overOf), judged when it is fetched.
  const lostVouchers = new PaymentsInDoubt<LostVoucher>(true);
  /** Per origin, the last voucher offer one of its gates charged: its next pages are paid ahead on it (batchSettlement.payAhead). */
  const chargedOffers = new Map<string, Offer>();
  /**
   * Whether `channel` takes a page of `price` paid ahead as it stands: it covers the page with no
   * deposit, and every voucher it sent was answered (what it counts charged is what its gate
   * counts, so a voucher at its total plus a wrong price meets a correction, never a total that
   * another price would make right).
   */
  const paysAhead = (channel: Channel, price: bigint) =>
    !channel.withdrawing &&
    !refused.has(channel) &&
    channel.unanswered.length === 0 &&
    channel.charged + price <= channel.deposited &&
    !lostVouchers.some((_, lost) => lost.channelId === channel.channelId);
  /**
   * The offer `url`'s page is paid ahead with, if it may be (batchSettlement.payAhead): over https
   * (or payOverHttp), no token for it, its origin's gate charged a voucher before, at a price within
   * `limit`, on a channel that takes it as it stands (paysAhead).
   */
  function offerAheadFor(url: URL, limit: bigint): Offer | undefined {
    if (!batch?.payAhead || (isPlainHttpOffLoopback(url) && !options.payOverHttp)) return undefined;
    if (tokens.get(TokenCache.key(url)) !== undefined) return undefined;
    const charged = chargedOffers.get(url.origin);
    if (!charged || charged.amount > limit) return undefined;
    const channel = channels.get(ChannelBook.key(url.origin, charged));
    return channel && paysAhead(channel, charged.amount) ? offerAhead(charged, url) : undefined;
  }
  /** Payments taken as bought, by page: sent again when the token they bought is refused or never came. */
  const receipts = new Receipts();
  /**
   * Remembers a payment (its header) taken as bought for its page, with the token it bought, if any.
   * Only a gate's (its payment names it) or one that bought a token: a plain x402 site's token-less
   * payment has no token to be refused, and is paid anew each request as before.
   */
  const keepReceipt = (
    paidAt: PaidAt,
    header: [string, string],
    token: string | undefined,
    sentAt: number,
    notBefore?: number,
  ) => {
    const page = TokenCache.key(new URL(paidAt.url));
    if (token) tokenLives.learn(TokenCache.hostOf(page), token);
    if (paidGateRef(paidAt.offer, paidAt.verifyUrl) === undefined && token === undefined) return;
    receipts.keep(page, {
      header,
      paidAt,
      sentAt,
      until: receiptUntil(token, sentAt),
      notBefore,
      ...(token === undefined && { lastIssue: lastIssueOf(header, sentAt) }),
    });
  };
  /** The offers whose payment onPayment reported: never reported unconfirmed after (one reported unconfirmed may be paid later). */
  const reported = new WeakSet<Offer>();
  /** The offers whose payment onUnconfirmedPayment reported, and as what: onPayment says so if it comes after. */
  const reportedUnconfirmed = new WeakMap<Offer, NonNullable<PaymentEvent['confirms']>>();
  const inflight = new Map<string, Promise<Shared>>();
  /**
   * Per page, when its last payment that left without buying a token ended (a tick of `clock`) and
   * its error: a fetch of the page sent before then overlapped it, whenever its own 402 came (a site
   * can hold one back until the payment before it is refused), and fails as it did.
   */
  const unpaidEnds = new Map<string, { endedAt: number; error: unknown }>();
  let clock = 0;
  let apiUrl = options.apiUrl?.replace(/\/+$/, '');

  /** A page's cached token goes to that page only, whichever hop of a redirect chain it is. */
  const tokenFor = (url: URL): Record<string, string> => {
    const token = tokens.get(TokenCache.key(url));
    return token ? { [TOKEN_HEADER]: token } : {};
  };
  const sign = options.webBotAuth ? webBotAuthHopSigner(options.webBotAuth, options.payOverHttp === true) : undefined;
  // What it throws is marked when it surely never reached a server (wasUnsent): a payment it carried never left.
  // A payment leaves only while its caller still waits (checked as its request would leave), and its
  // request then runs under the payment's own signal (`paidUnder`, agentFetch's graceAfter) whatever
  // the caller's does, and so does every resend of it (`sentBefore`): that answer (a settlement, a token)
  // is the payment's outcome, which the fetches waiting on it and the next one need, and a site may
  // name no verify_url to give it again. agentFetch answers the caller's abort at once all the same.
  const send = (
    hop: Hop,
    extra: Record<string, string> = {},
    onAnswer?: (answer: Response) => void,
    { sentBefore = false, paidUnder }: SendOptions & { paidUnder?: AbortSignal } = {},
  ) => {
    if (!carriesPayment(extra))
      return markingUnsent(http, (watched) => follow(watched, hop, extra, tokenFor, sign, onAnswer));
    const detached = { ...hop, init: { ...hop.init, signal: paidUnder } };
    return markingUnsent(
      http,
      (watched) => follow(watched, detached, extra, tokenFor, sign, onAnswer),
      sentBefore ? undefined : (hop.init.signal ?? undefined),
    );
  };

  /**
   * Pays for the page behind `challenge` (its 402, or the offer it is paid ahead with) and returns
   * the paid response and the token it carried.
   * `spent()` is called when an exact payment went through or may have, or was refused by a site
   * that holds it (and could still settle it), whatever the outcome (a voucher may be resent
   * instead: the gate answers the same voucher as it did the first time).
   */
  async function pay(
    url: string,
    requested: string,
    challenge: Response | PaidAhead,
    retry: Retry,
    spent: () => void,
    maxPrice: bigint,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; token?: string } | typeof ASK_FIRST> {
    // A payment sent for this page before, its outcome never learned: asked about first, at no cost.
    const page = TokenCache.key(new URL(url));
    // A payment refused but held is held against the page and the URL asked for (a redirect may lead
    // to a new page each time); a host holding MAX_HELD_PER_HOST such pages, or its domain
    // MAX_HELD_PER_DOMAIN (HeldPages.hostUntil), gets no more payments.
    const heldKeys = [page, requested];
    // A payment that bought the page before, its token refused or never come (a front can drop or
    // forge it): sent again first, which its gate answers for the page it paid, never charging twice.
    // The challenge is let go whatever comes of an earlier payment asked about first: its answer, or its failure.
    const insteadOfChallenge = async <T>(work: Promise<T>): Promise<T> => {
      const outcome = await work.catch(async (error: unknown) => {
        await letGo(challenge);
        throw error;
      });
      if (outcome) await letGo(challenge);
      return outcome;
    };
    const again = await insteadOfChallenge(resendReceipt(url, page, retry, spent));
    if (again) return again;
    const earlier = unconfirmed.get(page);
    if (earlier) {
      const bought = await insteadOfChallenge(boughtEarlier(url, page, earlier, retry, spent));
      if (bought) return bought;
    }
    // Refused, but the site holds the authorization and may settle it until it expires: another for
    // the same page would be one more it could take (a site refusing every payment, asking for
    // another each time, would hold the whole budget for one page).
    const heldUntil =
      heldKeys.map((key) => heldPages.until(key)).find((until) => until !== undefined) ??
      heldPages.hostUntil(TokenCache.hostOf(page));
    if (heldUntil !== undefined) {
      await letGo(challenge);
      throw heldPayment(url, heldUntil);
    }
    // Under the URL asked for too: a redirect may lead it to another spelling of the page's site
    // (the same path); one paid for another path is that page's, not this one's, and one paid on
    // another site is that site's: the URL asked for is whoever redirects it, and may lead anywhere.
    const refusedEarlier = [page, requested]
      .map((key) => refusedPayments.get(key))
      .find((refused) => refused && samePath(refused.url, url) && sameSite(refused.url, url));
    if (refusedEarlier) {
      const bought = await insteadOfChallenge(boughtDespiteRefusal(url, page, refusedEarlier, retry, spent));
      if (bought) return bought;
    }
    // A voucher or a transfer sent for this page before, its outcome never learned: settled first,
    // whatever the site offers now. Paid another way meanwhile, the page would be paid twice: a site
    // (or a front) can stop offering the scheme the agent paid it by.
    const inDoubt = await earlierVoucherOrTransfer(url, page, retry, maxPrice, signal).catch(async (error: unknown) => {
      await letGo(challenge);
      // Still in doubt: the fetches waiting on this page fail with it, rather than each send it in turn.
      if (error instanceof PaymentFailedError) spent();
      throw error;
    });
    if (inDoubt) {
      await letGo(challenge);
      return inDoubt;
    }
    if (isPaidAhead(challenge)) {
      const paid = await payByVoucher(url, challenge.ahead, retry, maxPrice, signal, true);
      return paid === NO_CHANNEL_PLACE ? ASK_FIRST : paid;
    }
    const offers = await readOffers(challenge);
    const voucherOffer =
      batch &&
      firstAllowed(
        offers.filter((o) => o.scheme === BATCH_SETTLEMENT_SCHEME && batch.escrows.has(o.batch!.escrow.toLowerCase())),
        allowed,
      );
    const exact = exactOffers(offers);
    if (voucherOffer) {
      const paid = await payByVoucher(url, voucherOffer, retry, maxPrice, signal);
      if (paid !== NO_CHANNEL_PLACE) return paid;
      // A new channel would be one too many: this page is paid exact, or not at all.
      if (!firstAllowed(exact, allowed))
        throw new PaymentFailedError(
          url,
          'channel_limit',
          `this agent holds deposits in ${batch!.maxChannels} channels already (batchSettlement.maxChannels) and ${new URL(url).origin} offers no exact payment it may make; withdraw or refund one first, or raise maxChannels`,
        );
    }
    const offer = chooseOffer(url, exact, allowed);
    if (offer.verifyUrl && !apiUrl) apiUrl = new URL(offer.verifyUrl).origin;
    if (offer.amount > maxPrice)
      throw new PriceTooHighError(url, formatMicrosUsd(offer.amount), formatMicrosUsd(maxPrice));
    // One of the payments its host and domain may have under way, each of which may end held
    // (PaymentSlots): pages of one host fetched at once wait their turn.
    const host = TokenCache.hostOf(page);
    // A transfer is never held (the site cannot keep what the chain moved): no slot.
    const freeSlot = mode === 'transfer' ? () => undefined : await slots.take(host, heldPages, signal);
    if (!freeSlot) throw heldPayment(url, heldPages.hostUntil(host) ?? Date.now());
    try {
      // A payment whose outcome is never learned is remembered until it is over, so that its page is
      // not paid twice; with no room to remember one more, none is made.
      const room = [unconfirmed.roomFor(page), unproven.roomFor(page)].find((answer) => answer !== 'yes');
      if (room)
        throw new PaymentFailedError(
          url,
          'too_many_in_doubt',
          `this agent holds ${fullRoomText(room, 'payments', url)} whose outcome it never learned (the site or its API failed to answer); it pays again as they end, each at most 35 minutes after it was made (longer on a site whose tokens live longer)`,
        );
      // The site's share first, in one step with its check: pages of it fetched at once each count.
      if (!siteSpend.take(host, offer.amount))
        throw new SiteBudgetExceededError(
          url,
          formatMicrosUsd(offer.amount),
          formatMicrosUsd(siteSpend.remaining(host)!),
          SiteSpend.siteOf(host),
        );
      const reservation = await budget.reserve(offer.amount).catch((error: unknown) => {
        siteSpend.giveBack(host, offer.amount);
        throw error;
      });
      if (!reservation) {
        siteSpend.giveBack(host, offer.amount);
        throw new BudgetExceededError(url, formatMicrosUsd(offer.amount), formatMicrosUsd(await budget.remaining()));
      }
      // Spent: it went through, or may have. Held: refused, but the site holds a signed authorization
      // it could still settle until it expires, so it stays reserved (not spent, not a payment) until
      // the chain says what became of it (held-authorizations.ts), or its gate's API answers a token
      // for it (boughtDespiteRefusal).
      let outcome = 'free' as 'free' | 'spent' | 'held'; // set by mark(), which TypeScript's narrowing does not see
      let heldHeader: [string, string] | undefined;
      const mark = (next: 'free' | 'spent' | 'held', header?: [string, string]) => {
        outcome = next;
        heldHeader = header;
      };
      let confirmed = false;
      const sentAt = Date.now(); // no token this payment buys is issued before
      try {
        const result =
          mode === 'transfer'
            ? await payByTransfer(url, offer, retry, () => mark('spent'), signal)
            : await payByAuthorization(url, offer, retry, mark, signal);
        confirmed = true;
        return result;
      } finally {
        if (outcome === 'spent' || outcome === 'held') spent();
        if (outcome === 'free') siteSpend.giveBack(host, offer.amount);
        if (outcome !== 'held') await budget.settle(reservation, outcome === 'spent');
        else {
          const signed = heldHeader === undefined ? null : authorizationOf({ offer, header: heldHeader });
          if (signed) {
            const one: HeldAuthorization = { reservation, ...signed };
            held.add(one);
            const until = Number(signed.validBefore) * 1000 + HELD_PAGE_MARGIN_MS;
            heldPages.keep(page, until);
            if (requested !== page) heldPages.keep(requested, until, { alias: true });
            // Asked about before its page is paid anew: a front's own 402 may answer a payment its gate took.
            const refusedPayment: RefusedPayment = {
              url,
              offer,
              verifyUrl: offer.verifyUrl,
              header: heldHeader!,
              sentAt,
              authorization: one,
              keys: heldKeys,
            };
            keepRefusedPayment(refusedPayments, refusedPayment);
          }
        }
        // Failing, with the payment out of the agent's hands: said before the fetch rejects, once the
        // budget holds it (a callback that throws then leaves the budget right). A payment its gate
        // confirmed, the read with its token failing after, was reported paid.
        if (!confirmed && outcome !== 'free' && !reported.has(offer))
          reportUnconfirmed(url, offer, outcome === 'held' ? 'held' : 'unknown');
      }
    } finally {
      freeSlot();
    }
  }

  function heldPayment(url: string, until: number): PaymentFailedError {
    return new PaymentFailedError(
      url,
      'payment_held',
      `the site refused this agent's last payment for the page (or others of its site or domain, or one this URL redirected to) but holds its signed authorization until ${new Date(until).toISOString()}; not paid again before then`,
    );
  }

  async function payByAuthorization(
    url: string,
    offer: Offer,
    retry: Retry,
    mark: (outcome: 'free' | 'spent' | 'held', header?: [string, string]) => void,
    signal: AbortSignal | undefined,
  ) {
    const page = TokenCache.key(new URL(url));
    const [name, value] = await payer.paymentHeader(offer);
    // A caller that gave up before the payment left wants nothing sent: it never leaves.
    signal?.throwIfAborted();
    // Once sent, the signed authorization can be settled by whoever holds it until it expires, whatever
    // answer we get (a settlement still pending, a dropped connection): it counts as spent. Freed on a
    // refusal, a site that keeps the authorizations and refuses them would get one per page.
    mark('spent');
    // Until its outcome is learned, the next fetch of this page asks the gate's API about it before
    // paying again; a site that names no API to ask has the page wait until the authorization is over.
    const validBefore = authorizationOfHeader(value)?.validBefore;
    const settledBy =
      validBefore === undefined ? Date.now() + offer.maxTimeoutSeconds * 1000 : Number(validBefore) * 1000;
    // The token it bought lives that long after its settlement (the default, or longer as the site's
    // tokens were seen to), worth asking for until then; past it, asked once more (boughtEarlier),
    // the page waits no longer for an API that cannot say. So does an offer naming a Crawlgate gate
    // whose verify_url a front took out. A plain x402 site's answer buys no token: its page waits only
    // until the authorization is over.
    const tokenFrom = offer.verifyUrl !== undefined || paidGateRef(offer) !== undefined ? settledBy : undefined;
    const until = tokenFrom === undefined ? settledBy + HELD_PAGE_MARGIN_MS : tokenExpiryFrom(tokenFrom, page);
    const doubt: UnconfirmedAuthorization = {
      offer,
      verifyUrl: offer.verifyUrl,
      header: [name, value],
      sentAt: Date.now(),
      until,
      tokenFrom,
    };
    unconfirmed.keep(page, doubt);
    // Learned: it bought a token or an answer that is not a failure; refused (held authorizations follow
    // it from then) or never sent (freed). Otherwise the site or its API may still settle it.
    let learned = false;
    const markLearned = (next: 'free' | 'spent' | 'held', header?: [string, string]) => {
      if (next !== 'spent') learned = true;
      mark(next, header);
    };
    try {
      const { answered, ...paid } = await sendAuthorization(url, offer, [name, value], retry, markLearned, doubt);
      learned ||= answered;
      return paid;
    } finally {
      if (learned) unconfirmed.forget(page);
      // Sent, and no answer said whether it was taken: counted as spent, and watched on the chain,
      // which gives its price back if it was never used, its page asked about again or not.
      else if (!reported.has(offer)) watchInDoubt(page, doubt);
    }
  }

  function watchInDoubt(page: string, doubt: UnconfirmedAuthorization): void {
    const signed = authorizationOf(doubt);
    if (!signed) return;
    const watched: HeldAuthorization = {
      ...signed,
      onFreed: async () => {
        if (unconfirmed.get(page) === doubt) unconfirmed.forget(page);
        await budget.credit(doubt.offer.amount);
      },
    };
    if (held.add(watched)) doubt.watched = watched;
  }

  /** The authorization (its header) sent for the page, and what it bought. */
  async function sendAuthorization(
    url: string,
    offer: Offer,
    [name, value]: [string, string],
    retry: Retry,
    mark: (outcome: 'free' | 'spent' | 'held', header?: [string, string]) => void,
    doubt: UnconfirmedAuthorization,
  ) {
    let answer: Response | undefined;
    let response: Response | undefined;
    let pending = false;
    // The page read with the token the gate's API answers for this payment; `failure` when it has none.
    const readWithItsToken = async (failure: unknown) => {
      const read = await readWithTokenOfPayment(url, doubt, retry, failure);
      return { response: read.response, token: read.token, answered: read.confirmed };
    };
    try {
      ({ answer, response } = await retry({ [name]: value }));
      // The site accepted the payment but its settlement is not confirmed yet: the same header again is idempotent.
      for (
        let attempt = 0;
        answer.status === 503 && answer.headers.has('retry-after') && attempt < PENDING_RETRIES;
        attempt++
      ) {
        // Pending, unless the site says it took nothing (a busy gate): a load balancer's 503 may
        // have replaced the paid answer. The gate a pending answer names is the one asked about
        // it: a v1 payment names none, and the site paid it through a gate of its own (sent
        // again, it meets a new one).
        const said = await jsonOf(answer);
        if (!pending && !tookNothing(said)) {
          pending = true;
          if (doubt.verifyUrl) doubt.verifyUrl = gateOfPendingAnswer(said, doubt.verifyUrl);
        }
        await sleep(waitBeforeResendMs(answer));
        ({ answer, response } = await retry({ [name]: value }, { sentBefore: true }));
      }
    } catch (error) {
      // It failed before any request went out (a Web Bot Auth signature not made): the authorization
      // never left this process, nobody can settle it. A connection refused is not that (see unsent.ts).
      if (answer === undefined && wasUnsent(error)) {
        mark('free');
        throw error;
      }
      // The answer was lost (a dropped connection, a reset): the gate may have settled the payment.
      return readWithItsToken(error);
    }
    const settlement = settlementIn(answer);
    const paidAt = { url, offer, verifyUrl: doubt.verifyUrl };
    // A token for another page says nothing of this payment (a front can hand on one it kept).
    let token = boughtToken(answer.headers.get(TOKEN_HEADER), paidAt);
    // Said to be settling, the payment is on its way to the chain: a refusal, limit or redirect
    // answering it since (a rate limiter, a v1 payment sent again to a fresh gate) does not say it
    // failed. Only the gate's API can; until it does, the page stays in doubt and is not paid again.
    if (pending && doubt.verifyUrl && !token && settlement?.success !== true && !answer.ok && answer.status !== 503) {
      if (response !== answer) await response.body?.cancel().catch(() => undefined);
      await answer.body?.cancel().catch(() => undefined);
      const unsaid = new PaymentFailedError(
        url,
        'payment_unconfirmed',
        `the site said the payment was settling, then answered ${answer.status}; the gate's API does not confirm it yet. It stays counted as spent, and the next fetch of the page asks about it before paying again`,
      );
      return readWithItsToken(unsaid);
    }
    if (answer.status === 402 || settlement?.success === false) {
      // Already settled, by this gate or another (a v1 payment sent again meets a fresh gate): not
      // refused. Kept in doubt: the next fetch of the page asks about it rather than pay again.
      if (settlement?.errorReason !== X402_REASONS.duplicate_settlement) mark('held', [name, value]);
      if (response !== answer) await response.body?.cancel().catch(() => undefined);
      const refusal = refusalOf(await jsonOf(answer));
      throw new PaymentFailedError(
        url,
        settlement?.errorReason ?? refusal.reason ?? 'payment_refused',
        refusal.detail ?? `the site answered ${answer.status}`,
      );
    }
    if (answer.status === 503) {
      await response.body?.cancel().catch(() => undefined);
      const stillPending = new PaymentFailedError(
        url,
        'settlement_pending',
        'the settlement was still pending after several retries; the gate has the payment and settles it at most once (it stays counted as spent)',
      );
      return readWithItsToken(stillPending);
    }
    // An answer with no token for the page and no settlement (a front's own 404, or a bare 200) says
    // nothing of the payment, which the gate behind may have settled (it sends its settlement with
    // every paid answer): asked of its API as an unanswered one is.
    const unsaid = !token && settlement?.success !== true && doubt.verifyUrl !== undefined;
    if (isUnanswered(answer.status) || unsaid) {
      // The site failed, or a limit or timeout in front of it answered, once its gate had taken the
      // payment or maybe before: with the token the payment bought (sent with the failure, or asked
      // of the gate's API, which settles it at most once), the page is read again instead of paid
      // again. Without one, nothing says it was paid or refused: not reported, and still in doubt.
      token ??= doubt.verifyUrl ? await tokenOfPayment(paidAt, doubt.verifyUrl, value) : undefined;
      if (!token) {
        reportUnconfirmed(url, offer, 'unknown');
        return { response, token, answered: false };
      }
      report(url, offer, settlement?.transaction ?? null, 'authorization');
      const read = await readWithToken(paidAt, token, [name, value], retry);
      if (read.confirmed) keepReceipt(paidAt, [name, value], token, doubt.sentAt);
      return { response: read.response, token, answered: read.confirmed };
    }
    // Settled, but its token did not come (a front dropped it): asked of the gate's verify_url, which
    // answers a payment it settled with its token, so the next fetch of the page has one.
    if (!token && doubt.verifyUrl) token = await tokenOfPayment(paidAt, doubt.verifyUrl, value).catch(() => undefined);
    report(url, offer, settlement?.transaction ?? null, 'authorization');
    keepReceipt(paidAt, [name, value], token, doubt.sentAt);
    return { response, token, answered: true };
  }

  /**
   * The page read with the payment that bought it before sent again (its receipt), the token it
   * bought refused or never come: the gate answers its own payment for the page it paid, never
   * charging twice. Undefined when there is none (a plain x402 site's token-less payment keeps none:
   * paid anew, as a site selling each request asks); a 402 to it is asked of its gate's verify_url,
   * whose token for that payment reads the page; fails while nothing shows it bought the page,
   * rather than pay twice, until the receipt ends. Nothing is counted or reported again.
   */
  async function resendReceipt(
    url: string,
    page: string,
    retry: Retry,
    spent: () => void,
  ): Promise<{ response: Response; token?: string } | undefined> {
    const receipt = receipts.get(page);
    if (!receipt) return undefined;
    // No price limit: sent again, a payment taken as bought charges nothing more.
    const { answer, response } = await retry({ [receipt.header[0]]: receipt.header[1] }, { sentBefore: true });
    // A token of its gate, come with the answer, may end the receipt sooner (one kept with none
    // lasts a token's default life, or its site's from its lastIssue when no token comes), never
    // later: a front's forgery cannot keep the page from being paid anew.
    const renewed = (token: string | undefined) => {
      if (token)
        receipts.keep(page, { ...receipt, until: Math.min(receipt.until, receiptUntil(token, receipt.sentAt)) });
      return token;
    };
    // The page: any answer but a 402, or the route's own 402 (a paywall behind the gate) carrying a
    // token of its gate, which no challenge of the gate carries.
    const token = boughtToken(answer.headers.get(TOKEN_HEADER), receipt.paidAt);
    if (answer.status === 402 ? token !== undefined : answer.ok || boughtWithAnswer(answer, receipt.paidAt))
      return { response, token: renewed(token) };
    if (response !== answer) await response.body?.cancel().catch(() => undefined);
    await answer.body?.cancel().catch(() => undefined);
    const verifyUrl = receipt.paidAt.verifyUrl ?? receipt.paidAt.offer.verifyUrl;
    // A receipt is a Crawlgate gate's (its payment named the gate, or a Crawlgate token came of it;
    // a plain x402 site's token-less payments keep none and are paid anew): the gate answers its own
    // payment, paid once, so a 402 or a failure (a front's own, or the gate's 503 once the token it
    // bought expired) is asked of its verify_url, never taken for a new sale, and without one the
    // fetch fails rather than pay twice.
    const verified =
      verifyUrl === undefined
        ? undefined
        : await tokenOfPayment(receipt.paidAt, verifyUrl, receipt.header[1]).catch(() => undefined);
    if (verified) {
      const read = await readWithToken(receipt.paidAt, verified, receipt.header, retry);
      if (read.confirmed) return { response: read.response, token: renewed(verified) };
      await read.response.body?.cancel().catch(() => undefined);
    }
    // Past the life its token was read to have (which a front may have forged short), the gate and
    // its API still have their word: the token its API answers for the payment, refused, has expired
    // (receiptUntil), or none came and the receipt is past its end, never sooner than the longest
    // life its site's tokens were seen to have (a front forging a short one and failing verify_url
    // gains nothing), from the last moment one could have been issued for a receipt kept with none:
    // what it bought is over, and the page is paid anew. An unexpired token refused
    // may be a front's doing: never paid twice.
    const end = Math.max(
      verified
        ? receiptUntil(verified, receipt.sentAt)
        : Math.max(receipt.until, tokenExpiryFrom(receipt.lastIssue ?? receipt.sentAt, page)),
      receipt.notBefore ?? 0,
    );
    if (!(Date.now() < end)) {
      receipts.forget(page);
      return undefined;
    }
    spent(); // the fetches waiting on this page fail with it, rather than each send it in turn
    throw new PaymentFailedError(
      url,
      'payment_unconfirmed',
      `the payment that bought the page before, sent again (its token refused or never come), was answered ${answer.status}; retry later rather than pay twice (the page is not paid again before ${new Date(end).toISOString()})`,
    );
  }

  /**
   * What an authorization sent for this page before bought, its outcome never learned: the page, read
   * with the token the gate's API answers for it (it settles a payment at most once); undefined once
   * the chain shows it never used, or the token it bought has expired (the page is paid anew). Fails
   * while the API cannot say (unreachable, still settling): a second payment could pay the page twice.
   */
  async function boughtEarlier(
    url: string,
    page: string,
    earlier: UnconfirmedAuthorization,
    retry: Retry,
    spent: () => void,
  ): Promise<{ response: Response; token: string } | undefined> {
    const paidAt = { url, offer: earlier.offer, verifyUrl: earlier.verifyUrl };
    const { asked, body, token } = await askAboutPayment(paidAt, earlier.header[1]);
    // The API cannot say, but the chain can once the authorization expired: never used, it paid
    // nothing, and what it was counted as spending comes back.
    const authorization = token ? null : authorizationOf(earlier);
    const state = authorization ? await chainStateOf(authorization) : 'none';
    if (state === 'unused') {
      unconfirmed.forget(page);
      // Given back once, by whichever of this and its watch learns it first.
      if (earlier.watched) await held.resolve(earlier.watched, false);
      else await budget.credit(earlier.offer.amount);
      return undefined;
    }
    // Past its until, without a token: what it bought, if anything, has expired by the longest life
    // its site's tokens were seen to have (learned since it was sent, too). A refusal from its
    // verify_url (a front can stand in for it) shortens that only for an agent that cannot read the
    // chain: one that can waits for it, which frees the page (unused, above) once final.
    const until = unreadable(state) ? endOf(earlier, page) : tokenEndOf(earlier, page);
    if (!token && !(Date.now() < until)) {
      unconfirmed.forget(page);
      return undefined;
    }
    if (!token) {
      // The API's refusal says no token will come, not that the money stayed: the site got the
      // authorization and can settle it (to whatever payTo its 402 named) until it expires, so the
      // page waits for that, and the chain decides. Any API's: a site can copy a real gate's 402.
      const refused = refusedByItsApi(asked, body);
      if (refused) earlier.refused = true;
      spent(); // the fetches waiting on this page fail with it, rather than each ask in turn
      throw new PaymentFailedError(
        url,
        'payment_unconfirmed',
        state === 'used'
          ? `a payment this agent sent for the page before got no token${refused ? ' (its verify_url refuses it)' : ''}, yet the chain shows its authorization used: the page is not paid again before ${new Date(until).toISOString()}`
          : refused && unreadable(state)
            ? `a payment this agent sent for the page before got no token (its verify_url refuses it), but whoever holds its authorization can still settle it: the page is not paid again before ${new Date(endOf(earlier, page)).toISOString()}`
            : refused
              ? `a payment this agent sent for the page before got no token (its verify_url refuses it), but whoever holds its authorization can still settle it: the page is paid anew once the chain shows it unused (a minute past its validBefore), or after ${new Date(until).toISOString()}`
              : "a payment this agent sent for the page before is neither confirmed nor refused yet (the gate's verify_url does not say); retry later rather than pay twice",
      );
    }
    if (!reported.has(earlier.offer)) report(url, earlier.offer, null, 'authorization');
    const { response, confirmed } = await readWithToken(paidAt, token, earlier.header, retry);
    // Forgotten once its page is read, and kept as its receipt: a read that fails, or shows nothing of
    // the payment, leaves it for the next fetch.
    if (confirmed) {
      unconfirmed.forget(page);
      keepReceipt(paidAt, earlier.header, token, earlier.sentAt);
    } else if (!(Date.now() < receiptUntil(token, earlier.sentAt))) {
      // Its token is refused and has expired (receiptUntil: a gate issuing short tokens, asked after
      // they expired): the page is paid anew, as the gate asks. Unexpired (a settlement confirmed
      // late bought a token that lives on), a refusal may be a front's: never paid twice.
      await response.body?.cancel().catch(() => undefined);
      unconfirmed.forget(page);
      return undefined;
    }
    return { response, token };
  }

  /**
   * What a payment refused before bought, asked once its hold is over (its authorization can no
   * longer be settled): a front can answer its own 402 to a payment its gate settled. The gate's API
   * is asked whether it recorded the payment (a question that never starts one): its token reads the
   * page, and the payment counts as spent, unless the chain shows the authorization unused (a
   * forgery, not taken); while the chain has yet to say, it fails, asked again shortly. Otherwise
   * the page is paid anew (undefined) when the chain shows the authorization unused, or past the
   * life its site's tokens were seen to have; where the chain cannot be read, also when the API
   * refuses it, or the site names no API (a plain x402 site: nothing to ask). Else it fails until
   * then: the chain shows it used (a front standing in for verify_url, or a site settling it
   * itself), or cannot say yet.
   */
  async function boughtDespiteRefusal(
    url: string,
    page: string,
    refused: RefusedPayment,
    retry: Retry,
    spent: () => void,
  ): Promise<{ response: Response; token: string } | undefined> {
    const { offer, verifyUrl, header, sentAt, authorization } = refused;
    // Its receipt is kept for the page it paid, whichever spelling of its site reached it now.
    const paidAt = { url: refused.url, offer, verifyUrl };
    const forget = () =>
      refused.keys.forEach((key) => refusedPayments.get(key) === refused && refusedPayments.forget(key));
    const paidPage = TokenCache.key(new URL(refused.url));
    const { asked, body, token } = await askAboutPayment(paidAt, header[1], { recordedOnly: true });
    const state = await chainStateOf(authorization);
    // Not final on chain yet (it will be within a minute or two): a token may be a front's
    // forgery, which the chain then shows; asked again shortly rather than taken now.
    if (token && state === 'pending') {
      spent();
      throw new PaymentFailedError(
        url,
        'payment_unconfirmed',
        "a payment this agent sent for the page before was refused, yet its gate's API answers a token for it; the chain has yet to show it made (it will within a minute or two of its validBefore): retry shortly",
      );
    }
    // A token for an authorization the chain shows never used is no gate's (a front's forgery).
    if (token && state !== 'unused') {
      forget();
      // Spent: as the chain shows it, or where nothing polls it; otherwise the polls settle it as the chain then says.
      if (state === 'used' || state === 'none' || state === 'other-chain') await held.resolve(authorization, true);
      if (!reported.has(offer)) report(url, offer, null, 'authorization');
      // Its receipt first: a read a front drops leaves it for the next fetch, never a page to pay anew.
      keepReceipt(paidAt, header, token, sentAt);
      const { response, confirmed } = await readWithToken(paidAt, token, header, retry);
      // Its token refused and expired: what it bought is over, and the page is paid anew. Refused
      // while it lives (a front's doing?), its receipt asks about it again rather than pay twice.
      if (!confirmed && !(Date.now() < receiptUntil(token, sentAt))) {
        receipts.forget(paidPage);
        await response.body?.cancel().catch(() => undefined);
        return undefined;
      }
      return { response, token };
    }
    // The longer life of the site it paid and the one reached now (a redirect to another spelling).
    const lastIssue = Number(authorization.validBefore) * 1000;
    const until = Math.max(tokenExpiryFrom(lastIssue, paidPage), tokenExpiryFrom(lastIssue, page));
    const unread = unreadable(state);
    const refusedByApi = refusedByItsApi(asked, body);
    const gate = verifyUrl !== undefined || paidGateRef(offer) !== undefined;
    if (state === 'unused' || !(Date.now() < until) || (unread && (refusedByApi || !gate))) {
      forget();
      if (state === 'unused') await held.resolve(authorization, false);
      return undefined;
    }
    spent(); // the fetches waiting on this page fail with it, rather than each ask in turn
    throw new PaymentFailedError(
      url,
      'payment_unconfirmed',
      state === 'used'
        ? `a payment this agent sent for the page before was refused, yet the chain shows its authorization used and no token came of it: the page is not paid again before ${new Date(until).toISOString()}`
        : `a payment this agent sent for the page before was refused, and neither its gate's API nor the chain can say yet whether it was taken all the same (the chain can, a minute or so past its validBefore, unless its RPC fails); retry shortly (it is not paid again before ${new Date(until).toISOString()} otherwise)`,
    );
  }

  /**
   * What its gate's verify_url (paidAt's) answers of a payment (its header): the answer, undefined
   * when there is none to ask or it cannot be reached; its body; the token it bought for paidAt's page.
   */
  async function askAboutPayment(paidAt: PaidAt, header: string, options?: { recordedOnly?: boolean }) {
    const asked = paidAt.verifyUrl
      ? await postToVerifyUrl(paidAt.verifyUrl, paymentBody(header, options)).catch(() => undefined)
      : undefined;
    const body = asked ? await jsonOf(asked) : undefined;
    return { asked, body, token: asked ? boughtTokenOf(paidAt, asked.status, body) : undefined };
  }

  /**
   * What the chain shows became of an authorization (finalStateOf), 'failed' when its RPC fails, or
   * 'none' with no chain client. The agent's own RPC is trusted on it.
   */
  async function chainStateOf(one: Omit<HeldAuthorization, 'reservation'>): Promise<ChainState> {
    const client = chainOf();
    if (!client) return 'none';
    return finalStateOf(client, one).catch(() => 'failed' as const);
  }

  /**
   * The page read with the token its payment bought; where no token opens it (a target a router may
   * read as another path: the gate answers 402), with that payment sent again, which the gate takes
   * again for the page it paid, never charging twice. `confirmed`: the token opened the page, or the
   * payment sent again was answered settled; otherwise (a token the gate refuses, then a front's own
   * 404 to the payment) nothing shows what the payment bought, and it stays in doubt.
   */
  async function readWithToken(
    paidAt: PaidAt,
    token: string,
    [name, value]: [string, string],
    retry: Retry,
  ): Promise<{ response: Response; confirmed: boolean }> {
    const { response } = await retry({ [TOKEN_HEADER]: token });
    if (response.status !== 402) return { response, confirmed: true };
    await response.body?.cancel().catch(() => undefined);
    const resent = await retry({ [name]: value }, { sentBefore: true });
    return { response: resent.response, confirmed: boughtWithAnswer(resent.answer, paidAt) };
  }

  /**
   * The page read with the token the payment (its header) bought, asked of the gate's verify_url (which
   * answers a payment it settled with its token, and settles a payment at most once), when the
   * site's answer to it brought none: lost, or the settlement still pending after the retries.
   * `failure` is thrown when the gate cannot say (no verify_url, refused, unreachable).
   */
  async function readWithTokenOfPayment(
    url: string,
    { offer, verifyUrl, header, sentAt }: UnconfirmedAuthorization,
    retry: Retry,
    failure: unknown,
  ): Promise<{ response: Response; token: string; confirmed: boolean }> {
    const token = verifyUrl ? await tokenOfPayment({ url, offer, verifyUrl }, verifyUrl, header[1]) : undefined;
    if (!token) throw failure;
    report(url, offer, null, 'authorization');
    const read = await readWithToken({ url, offer, verifyUrl }, token, header, retry);
    // Taken as bought once its token opened the page or the payment sent again was answered settled.
    if (read.confirmed) keepReceipt({ url, offer, verifyUrl }, header, token, sentAt);
    return { ...read, token };
  }

  /**
   * The access token the API answers for this payment header's payment, waiting out a settlement
   * still pending as the site's 503 is waited out; undefined when the API refuses it or cannot be
   * asked, or answers a token for another page. Still pending after the retries: the settlement may
   * land, so this fails as the 503 does.
   */
  async function tokenOfPayment(paidAt: PaidAt, verifyUrl: string, header: string): Promise<string | undefined> {
    let verified: Response;
    try {
      verified = await postToVerifyUrl(verifyUrl, paymentBody(header));
    } catch {
      return undefined;
    }
    if (verified.status === 202)
      throw new PaymentFailedError(
        String(paidAt.url),
        'settlement_pending',
        'the site failed and the settlement was still pending after several retries; the same payment can be retried later (it stays counted as spent)',
      );
    return boughtTokenOf(paidAt, verified.status, await jsonOf(verified));
  }

  async function payByTransfer(
    url: string,
    offer: Offer,
    retry: Retry,
    markCharged: () => void,
    signal: AbortSignal | undefined,
  ) {
    const { verifyUrl, gateRef } = offer;
    if (!verifyUrl || !gateRef)
      throw new UnsupportedPaymentError(
        `${url}: payMode "transfer" needs a Crawlgate gate (a verify_url naming it); use "authorization"`,
      );
    const page = TokenCache.key(new URL(url));
    // The transfer goes to whatever chain the RPC is: it must be the one the site asks to be paid on.
    const chainId = await payer.chain().wallet.getChainId();
    if (chainId !== offer.chainId)
      throw new PaymentFailedError(
        url,
        'wrong_chain',
        `rpcUrl is chain ${chainId}, the site asks to be paid on ${offer.chainId}`,
      );
    signal?.throwIfAborted(); // nothing sent for a caller that gave up
    const until = gateHoldUntil(offer.gateExp);
    let sent: SentTransfer | undefined;
    let txHash: Hash;
    try {
      txHash = await payer.transfer(offer, (known) => (sent = known));
    } catch (error) {
      // Only a transfer never sent, or mined and reverted, surely moved nothing. Any other failure
      // (an answer lost after the broadcast, a receipt not seen in time) may have paid: it stays
      // spent, and the page waits for what the chain says of it, never a second transfer.
      if (!(error instanceof TransferReverted || error instanceof TransferNotSent)) {
        markCharged();
        unproven.keep(page, { offer, verifyUrl, sent, until });
      }
      throw error;
    }
    markCharged(); // the USDC has moved, whatever happens next
    return proveTransfer(url, page, { offer, verifyUrl, sent: { ...sent!, hash: txHash }, until }, retry);
  }

  /**
   * Posts a mined transfer's proof to its gate's verify_url: the page it opens, and its token. Kept
   * as unproven, and asked again on the page's next fetch, unless the page opened.
   */
  async function proveTransfer(
    url: string,
    page: string,
    transfer: UnprovenTransfer & { sent: { hash: Hash } },
    retry: Retry,
  ) {
    const { offer, verifyUrl } = transfer;
    const txHash = transfer.sent.hash;
    unproven.keep(page, transfer); // until its proof is signed: its signer may fail
    const proof = await transferProof(offer, txHash);
    const keepUnproven = () => unproven.keep(page, { ...transfer, proof });
    let verified: Response;
    try {
      verified = await postToVerifyUrl(verifyUrl, proof);
    } catch (error) {
      keepUnproven();
      throw error;
    }
    const body = await jsonOf(verified);
    const token = boughtTokenOf({ url, offer }, verified.status, body);
    if (!token) {
      keepUnproven(); // no token for this page: asked again on the next fetch, never a second transfer
      const answer = verifyAnswerOf(body);
      const otherPage = verified.status === 200 && answer.accessToken !== undefined;
      throw new PaymentFailedError(
        url,
        answer.reason ?? (otherPage ? 'transfer_unproven' : `verify_${verified.status}`),
        answer.detail ??
          `sent ${txHash}, but the gate was not opened${otherPage ? " (the verify_url answered another page's token)" : ''}`,
      );
    }
    if (!reported.has(offer)) report(url, offer, txHash, 'transfer');
    const read = await readWithTransferToken(token, retry);
    if (read.opened) unproven.forget(page);
    else keepUnproven();
    return { response: read.response, token };
  }

  /**
   * The page read with the token a transfer's proof bought, and whether it opened it: a token the
   * gate refuses (402) shows nothing of the transfer, which stays unproven.
   */
  async function readWithTransferToken(token: string, retry: Retry) {
    const { response } = await retry({ [TOKEN_HEADER]: token });
    return { response, opened: response.status !== 402 };
  }

  /**
   * A payment or a transfer's proof posted to its gate's verify_url, waiting out a settlement still
   * pending (202). No redirect is followed: it goes to the URL the gate named, nowhere else (a 3xx is
   * a failure). Not the caller's abort: what the payment bought is learned for the fetches waiting on
   * it and the next one, whoever stopped waiting (agentFetch answers the abort). Each post ends after
   * VERIFY_POST_TIMEOUT_MS: a verify_url that never answers holds nothing for good.
   */
  async function postToVerifyUrl(verifyUrl: string, body: string): Promise<Response> {
    const post = () =>
      http(verifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(VERIFY_POST_TIMEOUT_MS),
      });
    let verified = await post();
    for (let attempt = 0; verified.status === 202 && attempt < PENDING_RETRIES; attempt++) {
      await sleep(waitBeforeResendMs(verified));
      verified = await post();
    }
    return verified;
  }

  /**
   * What a voucher or a transfer sent for this page before bought, its outcome never learned: the
   * lost voucher sent again, under its channel's turn, or the transfer's proof posted again. Undefined
   * when there is none, or when it surely bought nothing (the page is then paid anew); throws while
   * its outcome is still unknown.
   */
  async function earlierVoucherOrTransfer(
    url: string,
    page: string,
    retry: Retry,
    maxPrice: bigint,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; token?: string } | undefined> {
    const lost = lostVouchers.get(page);
    if (lost) {
      const bought = await channels.exclusive(lost.channelKey, () =>
        resendLostVoucher(url, page, lost, retry, maxPrice, signal),
      );
      if (bought) return bought;
    }
    const earlier = unproven.get(page);
    if (!earlier) return undefined;
    const proof = earlier.proof ?? (await proofOfEarlierTransfer(url, page, earlier));
    if (proof === undefined) return undefined;
    const answered = await postToVerifyUrl(earlier.verifyUrl, proof).catch(() => undefined);
    const token = answered && boughtTokenOf({ url, offer: earlier.offer }, answered.status, await jsonOf(answered));
    if (token) {
      if (!reported.has(earlier.offer)) report(url, earlier.offer, null, 'transfer');
      const read = await readWithTransferToken(token, retry);
      if (read.opened) unproven.forget(page);
      return { response: read.response, token };
    }
    // The USDC moved, whatever the verify_url says: until the gate is over the page waits for
    // that proof, rather than send a second payment (a site can copy a real gate's 402 with its
    // own payTo, and the real API then refuses the proof for good). Past it, refused once more
    // (an answer, not a failure or silence), what that transfer bought is lost: the page is paid anew.
    await answered?.body?.cancel().catch(() => undefined);
    if (Date.now() >= earlier.until && answered && !isUnanswered(answered.status)) {
      unproven.forget(page);
      return undefined;
    }
    throw new PaymentFailedError(
      url,
      'transfer_unproven',
      `a transfer this agent sent for the page is not proven (its verify_url gives no token for it); it is asked again until ${new Date(earlier.until).toISOString()}, rather than pay twice`,
    );
  }

  /**
   * The proof of a transfer sent for this page whose outcome was not learned (its broadcast's or
   * receipt's answer lost, its proof not signed), once the chain shows it mined; undefined, the
   * page let go to be paid anew, once it reverted or can never be mined (its nonce taken by
   * another). Throws meanwhile, however long: a transfer still pending, or dropped but still
   * sendable, may yet be mined, and a second one would pay the page twice.
   */
  async function proofOfEarlierTransfer(url: string, page: string, earlier: UnprovenTransfer) {
    const fate = earlier.sent ? await payer.transferFate(earlier.sent) : ({ kind: 'unknown' } as const);
    if (fate.kind === 'mined') {
      const proof = await transferProof(earlier.offer, fate.hash);
      unproven.keep(page, { ...earlier, sent: { ...earlier.sent!, hash: fate.hash }, proof });
      return proof;
    }
    if (fate.kind === 'reverted' || fate.kind === 'never') {
      unproven.forget(page);
      return undefined;
    }
    throw new PaymentFailedError(
      url,
      'transfer_unproven',
      `${earlier.sent?.hash ? `the transfer ${earlier.sent.hash}` : 'a transfer (its broadcast got no answer)'} this agent sent for the page is not seen mined; the page is not paid again until the chain shows it mined (then proven), reverted or replaced, rather than pay twice`,
    );
  }

  /** The body a transfer's proof posts: signed by the payer for this gate (the hash is public on chain, so it alone would let anyone claim the transfer). */
  async function transferProof(offer: Offer, txHash: Hash): Promise<string> {
    const request: VerifyPaymentRequest = {
      tx_hash: txHash,
      signature: await payer.signTransferProof(offer.gateRef!, txHash),
      payer: payer.address,
    };
    return JSON.stringify(request);
  }

  /**
   * The voucher whose answer was lost for this page, sent again (the gate answers it as it did, for
   * its gate, expired or not): the page it bought. Until its gate is over, the page is paid no other
   * way: a voucher sent again and refused (a 402, whoever answers it) fails the fetch, since the gate
   * may have charged it the first time and a new voucher would meet its correction and pay the page
   * twice. Refused once its gate is over and a token it bought would have expired (LostVoucher.over),
   * undefined, and the page is paid anew.
   * One the gate shows was not charged (another page's voucher took its total) is forgotten before.
   * Run under its own channel's turn, whatever channel the page's offer names now.
   */
  async function resendLostVoucher(
    url: string,
    pageKey: string,
    lost: LostVoucher,
    retry: Retry,
    maxPrice: bigint,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; token?: string } | undefined> {
    signal?.throwIfAborted();
    if (lost.offer.amount > maxPrice)
      throw new PriceTooHighError(url, formatMicrosUsd(lost.offer.amount), formatMicrosUsd(maxPrice));
    // Past its gate's hold, its gate's API is asked first: the gate answers a voucher it charged
    // whose token has expired with a 503 to wait out, again at every fetch, and only the API says so.
    if (!(Date.now() < lost.until)) {
      const asked = await lostVoucherAskedOfItsGate(url, pageKey, lost, retry);
      if (asked !== UNSAID) return asked;
    }
    let response!: Response;
    const paidAnswer = await resendWhileUnconfirmed(async () => {
      const sent = await retry({ 'PAYMENT-SIGNATURE': lost.header }, { sentBefore: true });
      response = sent.response;
      return sent.answer;
    }, PENDING_RETRIES);
    const answer = voucherAnswerOf(paidAnswer);
    // Its own channel: one withdrawn since is replaced by a new one on the same terms (the same key).
    const channel = channels.all().find((known) => known.channelId === lost.channelId);
    const token = paidAnswer.headers.get(TOKEN_HEADER) ?? undefined;
    if (answer.kind === 'charged') {
      voucherCharged(url, pageKey, channel, lost.total, lost.offer, answer.settlement.transaction || null);
      // Charged and answered without the page (a front's 5xx keeping the settlement): sent again next fetch.
      if (boughtWith(response, token, { url, offer: lost.offer }))
        voucherBought(url, pageKey, lost, token, overOf(lost, pageKey));
      else lost.claimedCharged = true;
      return { response, token };
    }
    // Nothing said of it, but a final answer (as for a voucher sent the first time): that answer. It
    // stays in doubt unless a token shows it bought the page: a front's own 404, or a bare 200, says
    // nothing of what the gate behind it charged.
    if (answer.kind === 'unconfirmed' && !awaitsResend(paidAnswer)) {
      if (tokenBoughtAt(token, { url, offer: lost.offer }))
        voucherBought(url, pageKey, lost, token, overOf(lost, pageKey));
      return { response, token };
    }
    if (paidAnswer !== response) await paidAnswer.body?.cancel().catch(() => undefined);
    await response.body?.cancel().catch(() => undefined);
    // Refused once its gate is over, it was never taken, or what it bought has expired once a token
    // of its site lives no longer from the last moment its gate could take it (a front holding it
    // can send it on late, refuse it with a 402 of its own, and a correction may have said the
    // channel was charged exactly its total): the page is then paid anew.
    const counted = lost.claimedCharged === true;
    const over = overOf(lost, pageKey);
    if (answer.kind === 'refused' && !(Date.now() < over)) {
      lostVouchers.forget(pageKey);
      // No correction may claim its total as charged and have a page pay on top of it, unless another
      // lost voucher of the channel is at that total (signed before this one's answer came).
      const shared = lostVouchers.some((_, other) => other.channelId === lost.channelId && other.total === lost.total);
      if (channel && !shared && !counted) {
        markAnswered(channel, lost.total);
        channels.saveAfterAnswer();
      }
      return undefined;
    }
    throw new PaymentFailedError(
      url,
      'payment_unconfirmed',
      answer.kind === 'unconfirmed'
        ? `the voucher this agent sent for the page before, its answer lost, is still not answered (the site answered ${response.status}); retry later rather than pay twice`
        : counted
          ? `the voucher this agent sent for the page before, its answer lost, is refused now (${response.status}), though the channel's count holds it (the site was paid for this page): the page is not paid again before ${new Date(over).toISOString()}`
          : `the voucher this agent sent for the page before, its answer lost, is refused now (${response.status}), but its gate may have charged it then: the page is not paid again before ${new Date(over).toISOString()}`,
    );
  }

  /**
   * What a lost voucher bought, by the token its gate's API answers for it: UNSAID without one (no
   * verify_url, refused, unreachable), else it was charged and is counted so, and the page is read
   * with that token; refused, and that token has expired (receiptUntil), no sooner than
   * LostVoucher.over, what it bought is over: undefined, the page is paid anew. An
   * unexpired token refused may be a front's doing: never paid twice.
   */
  async function lostVoucherAskedOfItsGate(
    url: string,
    pageKey: string,
    lost: LostVoucher,
    retry: Retry,
  ): Promise<{ response: Response; token: string } | undefined | typeof UNSAID> {
    const { verifyUrl } = lost.offer;
    const paidAt = { url, offer: lost.offer, verifyUrl };
    const token = verifyUrl ? await tokenOfPayment(paidAt, verifyUrl, lost.header).catch(() => undefined) : undefined;
    if (!token) return UNSAID;
    // Counted charged, and reported; the channel's other lost vouchers are left to their own gates'
    // word: a token from a verify_url a front stands in for is no proof that they were never charged.
    const channel = channels.all().find((known) => known.channelId === lost.channelId);
    if (channel && lost.total > channel.charged) {
      markCharged(channel, lost.total);
      channels.saveAfterAnswer();
    }
    if (!reported.has(lost.offer)) report(url, lost.offer, null, 'voucher', channel?.channelId);
    lost.claimedCharged = true;
    const read = await readWithToken(paidAt, token, ['PAYMENT-SIGNATURE', lost.header], retry);
    // No sooner than its over (a token of its site's life from the last moment its gate could take
    // it): the token may be a front's, forged to have expired, while the real one opens the page (the
    // wait on an API of shorter tokens). So for the receipt it leaves, whose payment's resends the
    // same front may refuse: that floor alone, since a forged long life would outlast the API's word.
    const floor = overOf(lost, pageKey);
    const end = Math.max(receiptUntil(token, lost.sentAt), floor);
    if (read.confirmed) {
      voucherBought(url, pageKey, lost, token, floor);
      return { response: read.response, token };
    }
    await read.response.body?.cancel().catch(() => undefined);
    if (!(Date.now() < end)) {
      lostVouchers.forget(pageKey);
      return undefined;
    }
    throw new PaymentFailedError(
      url,
      'payment_unconfirmed',
      `the voucher this agent sent for the page before, its answer lost, bought a token its site refuses now: the page is not paid again before ${new Date(end).toISOString()}`,
    );
  }

  /**
   * The gate answered a voucher of `channel` for `total`, paying `offer`, charged: the channel counts
   * it (a voucher sent again may be below what it counts since), the lost vouchers it shows were
   * never charged are let go, and the payment is reported. No channel: its own was forgotten since.
   */
  function voucherCharged(
    url: string,
    pageKey: string,
    channel: Channel | undefined,
    total: bigint,
    offer: Offer,
    transaction: string | null,
  ): void {
    if (channel) {
      if (total > channel.charged) markCharged(channel, total);
      forgetLostVouchersAt(channel.channelId, total, offer.amount, pageKey);
      channels.saveAfterAnswer();
    }
    // Once per payment: a voucher charged again when resent (its page lost the first time) is the same one.
    if (!reported.has(offer)) report(url, offer, transaction, 'voucher', channel?.channelId);
  }

  /** A voucher (its header and offer) that bought `url`'s page: no longer in doubt, and kept as the page's receipt. */
  function voucherBought(
    url: string,
    pageKey: string,
    { header, offer, sentAt }: Pick<LostVoucher, 'header' | 'offer' | 'sentAt'>,
    token?: string,
    notBefore?: number,
  ) {
    lostVouchers.forget(pageKey);
    keepReceipt({ url, offer }, ['PAYMENT-SIGNATURE', header], token, sentAt, notBefore);
  }

  /**
   * Whether a charged voucher's answer brought its page: a success carrying a token of its gate, as
   * the gate's paid answers all do, or the route's own 402 carrying one (a paywall of the
   * publisher's own, behind the gate: the page is what the route answers). A front can keep the
   * gate's settlement on an answer of its own (a 502, a 200 "maintenance") and add a token it
   * forged: either alone shows nothing, and a forged token kept is refused at its next use, when
   * the voucher is sent again first (resendReceipt).
   */
  function boughtWith(response: Response, token: string | undefined, paidAt: PaidAt): boolean {
    return (response.ok || response.status === 402) && tokenBoughtAt(token, paidAt);
  }

  /** A voucher of this channel charged at `charged` for a page of `price`: the lost ones it shows were never charged are let go. */
  function forgetLostVouchersAt(channelId: Hex, charged: bigint, price: bigint, chargedPage: string): void {
    lostVouchers.forgetWhere(
      (page, lost) => page !== chargedPage && lost.channelId === channelId && neverCharged(lost.total, charged, price),
    );
  }

  /**
   * Pays with a voucher on this origin's channel for the offer's terms (opening or topping it up
   * within the budget), one page of a channel at a time. A corrective 402 is followed only when its
   * numbers agree with the agent's own (checkedCorrection). NO_CHANNEL_PLACE: nothing was done, as
   * a new channel would exceed batchSettlement.maxChannels. A caller that gave up before the voucher
   * left (while the page waited its turn, say) has nothing sent and nothing counted.
   * `ahead`: the offer is the page's paid ahead (offerAheadFor), its voucher sent with the page's
   * first request; ASK_FIRST when it was not paid ahead after all.
   */
  function payByVoucher(
    url: string,
    offer: Offer,
    retry: Retry,
    maxPrice: bigint,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; token?: string } | typeof NO_CHANNEL_PLACE>;
  function payByVoucher(
    url: string,
    offer: Offer,
    retry: Retry,
    maxPrice: bigint,
    signal: AbortSignal | undefined,
    ahead: true,
  ): Promise<{ response: Response; token?: string } | typeof NO_CHANNEL_PLACE | typeof ASK_FIRST>;
  async function payByVoucher(
    url: string,
    offer: Offer,
    retry: Retry,
    maxPrice: bigint,
    signal: AbortSignal | undefined,
    ahead = false,
  ): Promise<{ response: Response; token?: string } | typeof NO_CHANNEL_PLACE | typeof ASK_FIRST> {
    const origin = new URL(url).origin;
    const key = ChannelBook.key(origin, offer);
    const pageKey = TokenCache.key(new URL(url));
    return channels.exclusive(key, async () => {
      // A voucher whose answer is lost is remembered until its gate is over; with no room to remember one more, none is sent.
      const room = lostVouchers.roomFor(pageKey);
      if (room !== 'yes')
        throw new PaymentFailedError(
          url,
          'too_many_in_doubt',
          `this agent holds ${fullRoomText(room, 'vouchers sent', url)} whose answer was lost; it pays again as their gates' holds end, 15 to 35 minutes after each was sent`,
        );
      let current = offer;
      let page: PageVouchers | undefined;
      for (let corrections = 0; ; corrections++) {
        signal?.throwIfAborted();
        if (current.amount > maxPrice)
          throw new PriceTooHighError(url, formatMicrosUsd(current.amount), formatMicrosUsd(maxPrice));
        const known = channels.get(key);
        // Judged again in the channel's turn: a page paid before this one waited may have left it short or unanswered.
        if (ahead && page === undefined && !(known && paysAhead(known, current.amount))) return ASK_FIRST;
        // A site names new channel terms rarely (its claim authorizer changed); one naming new ones
        // on every page would have each take a deposit of its own, locking the budget in escrow.
        // Checked and taken with no await between: concurrent pages of one origin count each other.
        // A known channel spent down to its deposit holds no place; topped up, it takes one again.
        // Judged on the page's first pass only: once a voucher went out, the page is this channel's.
        const takesPlace =
          page === undefined && (!known || (!holds(known) && known.charged + current.amount > known.deposited));
        if (takesPlace && channelsHolding(origin) >= MAX_CHANNELS_PER_ORIGIN)
          throw new PaymentFailedError(
            url,
            'channel_limit',
            `${origin} already has ${MAX_CHANNELS_PER_ORIGIN} channels holding deposits and names new channel terms; withdraw or refund one first`,
          );
        // One site may send the agent to many origins (wildcard DNS), each wanting a deposit.
        if (takesPlace && channelsHoldingAnywhere() >= batch!.maxChannels) return NO_CHANNEL_PLACE;
        const channel = known ?? newChannel(origin, current, payer.address);
        channels.set(key, channel);
        if (takesPlace) opening.add(channel);
        page ??= pageVouchers(channel);
        const total = channel.charged + current.amount;
        page.sent.add(total);
        let deposit: Awaited<ReturnType<typeof depositFor>> | undefined;
        try {
          deposit =
            total > channel.deposited ? await depositFor(url, channel, current, total - channel.deposited) : undefined;
        } catch (error) {
          if (!known) forgetIfEmpty(key, channel);
          throw error;
        } finally {
          opening.delete(channel); // from here its deposit (or a refused one) counts it
        }
        let signature: Hex;
        try {
          signature = await signVoucher(payer, channel, total);
          signal?.throwIfAborted(); // given up while the wallet signed: nothing leaves
        } catch (error) {
          await deposit?.settle('unsent'); // the wallet refused to sign, or the caller gave up: nothing left, nothing is spent
          if (!known) forgetIfEmpty(key, channel);
          throw error;
        }
        const voucher = { channelId: channel.channelId, maxClaimableAmount: total.toString(), signature };
        const payload = {
          type: deposit ? 'deposit' : 'voucher',
          channelConfig: channel.config,
          voucher,
          ...(deposit ? { deposit: deposit.payload } : {}),
        };
        const header = batchPaymentHeader(current, payload);
        // Sent, the voucher can be claimed up to its total by whoever holds it, whatever the answer.
        const signedBefore = channel.signed;
        if (total > channel.signed) channel.signed = total;
        const newlyUnanswered = markUnanswered(channel, total);
        const unsign = () => {
          channel.signed = signedBefore;
          if (newlyUnanswered) markAnswered(channel, total);
        };
        try {
          channels.save(); // before it leaves: the file never knows less than what was sent
        } catch (error) {
          unsign(); // not sent
          await deposit?.settle('refused'); // not sent either: its authorization stays reserved, for the next deposit
          throw error;
        }
        let response!: Response;
        let paidAnswer: Response;
        let answered = false;
        const sentAt = Date.now();
        // This voucher, as remembered if its answer is lost: with the life its site's tokens have now.
        const thisLostVoucher = () =>
          lostVoucher(
            key,
            channel.channelId,
            total,
            header,
            current,
            sentAt,
            tokenLives.lifeMs(TokenCache.hostOf(pageKey)),
          );
        try {
          // Judged by the answer to the voucher itself, a redirect included: what the voucher bought.
          paidAnswer = await resendWhileUnconfirmed(async () => {
            const sent = await retry({ 'PAYMENT-SIGNATURE': header }, { sentBefore: answered });
            answered = true;
            response = sent.response;
            return sent.answer;
          }, PENDING_RETRIES);
        } catch (error) {
          // It failed before any request went out, as for an authorization: nobody holds the voucher or its deposit.
          if (!answered && wasUnsent(error)) {
            unsign();
            await deposit?.settle('unsent');
            if (!known) forgetIfEmpty(key, channel);
            channels.saveAfterAnswer();
            throw error;
          }
          await deposit?.settle('unknown'); // no answer: the deposit may have been made
          lostVouchers.keep(pageKey, thisLostVoucher());
          throw error;
        }
        const answer = voucherAnswerOf(paidAnswer);
        const token = paidAnswer.headers.get(TOKEN_HEADER) ?? undefined;
        if (answer.kind === 'charged') {
          await deposit?.settle('spent');
          voucherCharged(url, pageKey, channel, total, current, answer.settlement.transaction || null);
          // A gate's own offer (one paid ahead names none): what this origin's next pages are paid ahead with.
          if (batch!.payAhead && paidGateRef(current) !== undefined)
            rememberLast(chargedOffers, origin, current, MAX_ORIGINS_PAID_AHEAD);
          // Charged, yet the page did not come (a front's 5xx keeping the gate's settlement, its page
          // and token dropped): the same voucher is sent again next fetch, which the gate answers for
          // its gate with the page and its token, rather than a new total paying for it again.
          if (boughtWith(response, token, { url, offer: current }))
            voucherBought(url, pageKey, { header, offer: current, sentAt }, token);
          else
            lostVouchers.keep(pageKey, {
              ...thisLostVoucher(),
              claimedCharged: true,
            });
          return { response, token };
        }
        if (answer.kind === 'unconfirmed') {
          // The voucher may have reached the gate or not: its deposit may have been made, and it stays
          // signed (channel.signed) but not charged. The next page signs the same total again: the
          // gate takes it, or its corrective 402 says it was charged (accepted up to what was signed).
          await deposit?.settle('unknown');
          // A final answer is the page's, the caller's. Unless a token shows the voucher bought the page,
          // it stays in doubt, as an answer still awaited does: sent again next fetch. The gate sends its
          // settlement with every paid answer, so one without (a front's own 404, or a bare 200) says nothing.
          const final = !awaitsResend(paidAnswer);
          if (final && tokenBoughtAt(token, { url, offer: current }))
            voucherBought(url, pageKey, { header, offer: current, sentAt }, token);
          else lostVouchers.keep(pageKey, thisLostVoucher());
          if (final && ahead && current === offer && response.status === 402) {
            // Its answer led elsewhere (a redirect in front of the gate) to a page asking to be paid:
            // asked for first, that page is paid; this voucher stays in doubt until a page's is charged at its total.
            await response.body?.cancel().catch(() => undefined);
            return ASK_FIRST;
          }
          if (final) return { response, token };
          await response.body?.cancel().catch(() => undefined);
          if (response.status === 503)
            throw new PaymentFailedError(
              url,
              'settlement_pending',
              'the voucher payment was still pending after several retries (a deposit it carried stays reserved until the chain says whether it was made)',
            );
          throw new PaymentFailedError(
            url,
            'payment_unconfirmed',
            `the site answered ${response.status} to the voucher, sent ${PENDING_RETRIES + 1} times, without saying whether it was charged (a deposit it carried stays reserved until the chain says whether it was made; the next page's voucher settles the rest)`,
          );
        }
        // Refused: the site says nothing was taken, the deposit included (the API judges it before sending it).
        await deposit?.settle('refused');
        // A total first sent for this page got its answer, whatever a correction with it claims; one
        // sent before, whose answer was lost, may still have been charged then.
        if (!page.unansweredBefore.has(total)) markAnswered(channel, total);
        channels.saveAfterAnswer();
        // A refusal that redirected (its body let go) is read for no correction, nor is where it led.
        if (paidAnswer !== response) await response.body?.cancel().catch(() => undefined);
        const corrected =
          paidAnswer === response
            ? (await readOffers(response.clone())).find(
                (o) =>
                  o.scheme === BATCH_SETTLEMENT_SCHEME && o.batch?.channelState && ChannelBook.key(origin, o) === key,
              )
            : undefined;
        if (corrected && corrections < MAX_CORRECTIONS) {
          // Its offers were read from a clone: the body itself is let go, or its connection stays open.
          await response.body?.cancel().catch(() => undefined);
          // Its terms are the channel's (the key), but what the next deposit is signed under (the
          // token's name and version) is the allow-list's to judge, as for any offer.
          if (!firstAllowed([corrected], allowed))
            throw new PaymentFailedError(
              url,
              'channel_state_refused',
              'the corrective 402 was not followed: it names a payment this agent may not make (the token under another name or version)',
            );
          const check = await checkedCorrection(channel, corrected, page);
          if (!check.ok)
            throw new PaymentFailedError(
              url,
              'channel_state_refused',
              `the corrective 402 was not followed: ${check.detail}`,
            );
          markCharged(channel, check.charged);
          // The gate says it took exactly a lost voucher's total: that voucher is not paid again past its hold.
          lostVouchers.forEach((_, lost) => {
            if (lost.channelId === channel.channelId && lost.total === check.charged) lost.claimedCharged = true;
          });
          markAnswered(channel, total); // the site said what it took, and this voucher is not it (or is, and was pruned)
          // Above what this agent knew it signed only with its own voucher for it: an earlier run's.
          if (check.charged > channel.signed) channel.signed = check.charged;
          channels.saveAfterAnswer();
          current = corrected;
          continue;
        }
        if (ahead && current === offer) {
          // Refused with nothing to correct (vouchers switched off since, say): asked for first, the
          // page is paid from the offers of its own 402, and so are the origin's next pages until
          // one of its gates charges a voucher again. (A fetch of the page waiting on this one then
          // asks for it first too: were the origin still paid ahead, two such fetches would wake each
          // other to pay ahead again, without end.)
          chargedOffers.delete(origin);
          await paidAnswer.body?.cancel().catch(() => undefined);
          await response.body?.cancel().catch(() => undefined);
          return ASK_FIRST;
        }
        const refusal = refusalOf(await jsonOf(paidAnswer));
        const reason = answer.settlement?.errorReason ?? refusal.reason ?? 'payment_refused';
        // Above the escrow's balance (or no such channel), a voucher that carried no deposit: the
        // channel may count a deposit that was never made (its answer lost in a process that then
        // stopped, the file written before it left). The chain says what the escrow holds; the page
        // deposits anew.
        if (
          (reason === BATCH_REASONS.cumulativeExceedsBalance || reason === BATCH_REASONS.channelNotFound) &&
          !deposit &&
          corrections < MAX_CORRECTIONS &&
          (await countsDepositsNeverMade(channel))
        )
          continue;
        throw new PaymentFailedError(url, reason, refusal.detail ?? `the site answered ${paidAnswer.status}`);
      }
    });
  }

  /**
   * Lowers what `channel` counts as deposited to what its escrow holds (never below what the site
   * charged), when the escrow holds less; whether it did. Only with no deposit this process sent still
   * in doubt (a held one may yet land, and is counted as the chain says once over), and never on a
   * site's word: read from the channel's own chain, so without a chain client for it nothing
   * changes. Lowered once per channel and process: a site that refunds the channel itself and
   * refuses the next voucher gets one deposit more for it, not one per page (each counted spent by
   * the budget until withdrawn).
   */
  async function countsDepositsNeverMade(channel: Channel): Promise<boolean> {
    const reader = chainOf();
    if (!reader || held.size > 0 || refused.has(channel) || lowered.has(channel)) return false;
    let balance: bigint;
    try {
      // Another chain's escrow at the same address would say the channel holds nothing.
      if ((await reader.getChainId()) !== channel.domain.chainId) return false;
      ({ balance } = await escrowChannelOf(reader, channel));
    } catch {
      return false; // the chain cannot say: the refusal stands
    }
    if (balance >= channel.deposited) return false;
    lowered.add(channel);
    lowerDeposited(channel, balance);
    channels.saveAfterAnswer();
    return true;
  }

  /**
   * Sends x402's refund request for this agent's channel with the site at `url`: a token-less
   * request of the page brings the 402 that names the channel's terms; the request carries a voucher
   * for exactly what the site charged (nothing new is promised). Believed only as refundedBy() reads
   * the chain.
   */
  async function refund(
    url: string,
    asked: { amountUsd?: string | number; signal?: AbortSignal } = {},
  ): Promise<WithdrawalStep> {
    const refundAmount =
      asked.amountUsd === undefined ? undefined : amount(asked.amountUsd, MAX_BUDGET_MICROS, 'amountUsd');
    if (refundAmount === 0n) throw new RangeError('amountUsd: a refund must be above 0');
    const reader = payer.chain().public; // throws without rpcUrl, before anything is sent
    const noToken = () => ({});
    const { response: challenge, hop } = await follow(
      http,
      await firstHop(url, { signal: asked.signal }),
      {},
      noToken,
      sign,
    );
    const origin = hop.url.origin;
    // The refund is asked of the site named, not of wherever it redirects.
    if (origin !== new URL(url).origin)
      throw new PaymentFailedError(url, 'no_channel', `the page redirects to ${origin}: ask that site for its refund`);
    const offer =
      challenge.status === 402 && batch
        ? (await readOffers(challenge)).find(
            (o) =>
              o.scheme === BATCH_SETTLEMENT_SCHEME &&
              batch.escrows.has(o.batch!.escrow.toLowerCase()) &&
              channels.get(ChannelBook.key(origin, o)) !== undefined,
          )
        : undefined;
    if (!offer)
      throw new PaymentFailedError(
        url,
        'no_channel',
        'this agent has no open channel with the site for the terms it offers',
      );
    const key = ChannelBook.key(origin, offer);
    return channels.exclusive(key, async () => {
      const channel = channels.get(key);
      if (!channel) throw new PaymentFailedError(url, 'no_channel', 'the channel is being withdrawn');
      // The chain the answer is read on must be the channel's, or no event of it could be found there.
      const chainId = await reader.getChainId();
      if (chainId !== channel.domain.chainId)
        throw new PaymentFailedError(
          url,
          'wrong_chain',
          `rpcUrl is chain ${chainId}, the channel is on ${channel.domain.chainId}`,
        );
      const askedAfter = await reader.getBlockNumber();
      const payload = {
        type: 'refund',
        channelConfig: channel.config,
        voucher: {
          channelId: channel.channelId,
          maxClaimableAmount: channel.charged.toString(),
          signature: await signVoucher(payer, channel, channel.charged),
        },
        ...(refundAmount === undefined ? {} : { amount: refundAmount.toString() }),
      };
      const header = batchPaymentHeader(offer, payload);
      // Judged by the site's own answer to it: a redirect is not followed (nor was it ever paid on).
      const asked = { ...hop, redirect: 'manual' as const };
      const { response } = await follow(http, asked, { 'PAYMENT-SIGNATURE': header }, noToken, sign);
      const settlement = settlementOf(response.headers.get('payment-response'));
      const txHash = settlement?.transaction;
      if (response.status !== 200 || settlement?.success !== true || !txHash || !isHash(txHash)) {
        const refusal = refusalOf(await jsonOf(response));
        throw new PaymentFailedError(
          url,
          settlement?.errorReason ?? refusal.reason ?? 'refund_refused',
          refusal.detail ?? `the site answered ${response.status} without a refund transaction`,
        );
      }
      // The block check alone would take an earlier refund again from a node that lags behind.
      if (channel.refundTxs.some((credited) => credited.toLowerCase() === txHash.toLowerCase()))
        throw new PaymentFailedError(url, 'refund_unconfirmed', `${txHash} was credited already`);
      const check = await refundedBy(reader, channel, txHash, askedAfter);
      if (!check.ok) throw new PaymentFailedError(url, 'refund_unconfirmed', check.detail);
      channel.refundTxs.push(txHash);
      lowerDeposited(channel, channel.deposited - check.amount);
      channels.saveAfterAnswer(); // before the credit: a crash in between credits less, never twice
      await budget.credit(check.amount);
      return { channelId: channel.channelId, amount: check.amount.toString(), txHash: txHash };
    });
  }

  /**
   * A deposit authorization of at least `needed` (the deposit option, or the rest of the budget when
   * less), reserved in the budget before it is signed. settle('spent') counts it as spent. A deposit
   * the site refused is taken off the channel but stays reserved, and the next deposit of the
   * channel resends it while it is worth it (refused-deposits.ts).
   */
  async function depositFor(url: string, channel: Channel, offer: Offer, needed: bigint) {
    const kept = refused.take(channel, needed);
    if (kept) return tracked(channel, kept, true);
    const validForSeconds = Math.min(offer.maxTimeoutSeconds, maxAuthorizationSeconds);
    if (validForSeconds < MIN_DEPOSIT_SECONDS)
      throw new PaymentFailedError(
        url,
        'deposit_window_too_short',
        `the site asks for a deposit valid ${validForSeconds} s; this agent signs deposits valid ${MIN_DEPOSIT_SECONDS} s at least`,
      );
    const remaining = await budget.remaining();
    const amount =
      batch!.depositMicros < needed ? needed : batch!.depositMicros <= remaining ? batch!.depositMicros : remaining;
    const reservation = amount >= needed ? await budget.reserve(amount) : null;
    if (!reservation) throw new BudgetExceededError(url, formatMicrosUsd(offer.amount), formatMicrosUsd(remaining));
    let payload: Awaited<ReturnType<typeof signDeposit>>;
    try {
      payload = await signDeposit(payer, channel, offer, amount, validForSeconds);
    } catch (error) {
      await budget.settle(reservation, false); // not signed: nothing can be spent with it
      throw error;
    }
    return tracked(
      channel,
      { payload, amount, reservation, validBefore: BigInt(payload.authorization.erc3009Authorization.validBefore) },
      false,
    );
  }

  /** `sentBefore`: a kept deposit a site was sent and refused, which it still holds. */
  function tracked(channel: Channel, deposit: SentDeposit, sentBefore: boolean) {
    channel.deposited += deposit.amount;
    let done = false;
    return {
      payload: deposit.payload,
      /**
       * spent: the site took it; unknown: it may have been made (its answer never came), reserved until
       * the chain says; refused: the site holds it unused (kept for the next deposit); unsent: it never left.
       */
      settle: async (outcome: 'spent' | 'unknown' | 'refused' | 'unsent') => {
        if (done) return;
        done = true;
        if (outcome === 'spent') return budget.settle(deposit.reservation, true);
        // Never made (a front answered every send of its voucher itself, and it expired): the channel
        // holds it no more, and the next page deposits anew, where counted as made it stayed short for good.
        const neverMade = () => {
          // Never below the charge: a site may have answered vouchers against it (a hostile one, made up).
          lowerDeposited(channel, channel.deposited > deposit.amount ? channel.deposited - deposit.amount : 0n);
          channels.saveAfterAnswer();
        };
        if (outcome === 'unknown') {
          if (!held.add(heldDeposit(channel, deposit, neverMade))) await budget.settle(deposit.reservation, true);
          return;
        }
        channel.deposited -= deposit.amount;
        if (outcome === 'refused' || sentBefore) refused.keep(channel, deposit);
        else await budget.settle(deposit.reservation, false); // never left this agent: nothing to hold
      },
    };
  }

  /** onPayment for a payment that went through; `channelId`: a voucher's channel. */
  function report(url: string, offer: Offer, txHash: string | null, how: PaymentEvent['mode'], channelId?: Hex) {
    reported.add(offer);
    const confirms = reportedUnconfirmed.get(offer);
    options.onPayment?.({
      url,
      priceUsd: formatMicrosUsd(offer.amount),
      amount: offer.amount.toString(),
      network: offer.network,
      payer: payer.address,
      txHash,
      mode: how,
      ...(channelId && { channelId }),
      ...(confirms && { confirms }),
    });
  }

  function reportUnconfirmed(url: string, offer: Offer, status: UnconfirmedPaymentEvent['status']) {
    reportedUnconfirmed.set(offer, { url, status });
    options.onUnconfirmedPayment?.({
      url,
      priceUsd: formatMicrosUsd(offer.amount),
      amount: offer.amount.toString(),
      network: offer.network,
      payTo: offer.payTo,
      payer: payer.address,
      mode,
      status,
    });
  }

  /** The agent's fetch: a page, paid ahead where it may be (batchSettlement.payAhead). */
  function agentFetch(input: string | URL | Request, agentInit?: AgentRequestInit): Promise<Response> {
    return fetchPage(input, agentInit, true);
  }

  async function fetchPage(
    input: string | URL | Request,
    agentInit: AgentRequestInit | undefined,
    mayPayAhead: boolean,
  ): Promise<Response> {
    const { maxPriceUsd: requestMax, ...init } = agentInit ?? {};
    // Checked before anything is sent: a limit that is no amount is the caller's mistake, not the site's.
    // Read up to the budget's bound: a limit above maxPriceUsd is taken and changes nothing.
    const requestMaxPrice = requestMax === undefined ? maxPrice : amount(requestMax, MAX_BUDGET_MICROS, 'maxPriceUsd');
    const limit = requestMaxPrice < maxPrice ? requestMaxPrice : maxPrice;
    const sentAt = ++clock;
    const start = await firstHop(input, init);
    const requested = TokenCache.key(start.url);
    // Paid ahead, the page's first request carries its voucher: no request goes out unpaid first.
    const ahead = mayPayAhead ? offerAheadFor(start.url, limit) : undefined;
    const unpaid = ahead ? undefined : await send(start);
    if (unpaid && unpaid.response.status !== 402) return unpaid.response;
    if (unpaid?.plainHttp && !options.payOverHttp) {
      await unpaid.response.body?.cancel().catch(() => undefined);
      throw new InsecureConnectionError(unpaid.hop.url.href);
    }
    const hop = unpaid?.hop ?? start;

    // The page that asked (perhaps a redirect away from the one requested) is the one paid for and
    // retried: the payment goes to it alone, not on to where its answer redirects. Concurrent
    // fetches of it share one payment.
    const key = TokenCache.key(hop.url);
    let bought: string | undefined;
    // The signal this fetch's payment runs under (its requests, its reads of their answers): set as it starts.
    const payment: { under?: AbortSignal } = {};
    const retry: Retry = (extra, options) => {
      // A token a retry carries is the page's, bought by a payment: kept before the read, which may fail too.
      if (extra[TOKEN_HEADER]) tokens.set(key, (bought = extra[TOKEN_HEADER]));
      // So is one the answer carries, kept before its redirect is followed: a redirect back to the page
      // (its canonical URL) then carries it.
      const keepToken = (answer: Response) => {
        // Never from a 402 here: a refusal sells nothing, whatever header it carries. (pay() judges a
        // route's own 402 to a payment, carrying a token of its gate, bought: boughtWith, resendReceipt.)
        const token = answer.status === 402 ? null : answer.headers.get(TOKEN_HEADER);
        if (token) tokens.set(key, (bought = token));
      };
      return send(hop, extra, keepToken, { ...options, paidUnder: payment.under });
    };
    // A token for the page came while this request was out (a concurrent fetch paid): read with it first.
    let challenge: Response | PaidAhead = unpaid?.response ?? { ahead: ahead! };
    const cached = tokens.get(key);
    if (cached !== undefined && unpaid?.sent.get(TOKEN_HEADER) !== cached) {
      await unpaid?.response.body?.cancel().catch(() => undefined);
      const reread = await retry({});
      if (reread.response.status !== 402) return reread.response;
      // A 402 the read was redirected to is another page's: paid here, its offer would go with this
      // page's request (and its verify_url be asked). The caller gets it unpaid, as after a payment.
      if (reread.response !== reread.answer) return reread.response;
      if (reread.plainHttp && !options.payOverHttp) {
        await reread.response.body?.cancel().catch(() => undefined);
        throw new InsecureConnectionError(hop.url.href);
      }
      challenge = reread.response;
    }
    const running = inflight.get(key);
    if (running) {
      // Waited for within the caller's own abort: the payment's fetch may wait on its gate a while.
      const shared = await untilAborted(running, hop.init.signal ?? undefined);
      if (shared.token) return (await retry({ [TOKEN_HEADER]: shared.token })).response;
      // Paid (or maybe, or refused with the authorization in the site's hands), and no token came of
      // it, not even from the gate's verify_url: paying again could pay twice for the page, so this
      // fetch fails as that one did.
      if (shared.spent) throw shared.spent.error;
      // Nothing paid (a voucher refused, a failure before the payment left), or a site that sells each
      // request: this fetch pays for itself, from the start (each round's first tries, so it ends).
      return agentFetch(input, agentInit);
    }
    const ended = unpaidEnds.get(key);
    if (ended && ended.endedAt > sentAt) {
      await letGo(challenge);
      throw ended.error;
    }
    let done!: (shared: Shared) => void;
    inflight.set(key, new Promise((resolve) => (done = resolve)));
    let spent = false;
    const signal = hop.init.signal ?? undefined;
    // One deadline for the payment once the caller gives up, whatever it sends or reads then.
    const grace = graceAfter(signal, PAID_ANSWER_GRACE_MS);
    payment.under = grace.signal;
    const paying = (async (): Promise<Response | typeof ASK_FIRST> => {
      try {
        const paid = await pay(hop.url.href, requested, challenge, retry, () => (spent = true), limit, signal);
        if (paid === ASK_FIRST) {
          done({});
          return ASK_FIRST;
        }
        const { response, token } = paid;
        if (token) tokens.set(key, token);
        done({ token });
        return response;
      } catch (error) {
        done(bought ? { token: bought } : spent ? { spent: { error } } : {});
        // Whatever token came: a fetch arriving later reads with a cached one first, and only then meets this.
        if (spent) noteUnpaidEnd(key, error);
        throw error;
      } finally {
        inflight.delete(key);
        grace.release();
      }
    })();
    // The caller's abort is answered at once; the payment's fate is still learned (the gate's
    // verify_url asked, the token kept) for the fetches waiting on it and the next one.
    if (signal)
      paying.then(
        (response) => signal.aborted && response !== ASK_FIRST && void response.body?.cancel().catch(() => undefined),
        () => undefined,
      );
    const answer = await untilAborted(paying, signal);
    // Not paid ahead after all: the page again, asked for first.
    return answer === ASK_FIRST ? fetchPage(input, agentInit, false) : answer;
  }

  /** Records that `key`'s payment ended now with `error`, keeping the latest 1,024 pages' ends. */
  function noteUnpaidEnd(key: string, error: unknown): void {
    rememberLast(unpaidEnds, key, { endedAt: ++clock, error }, 1024);
  }

  /** An agent route of the Crawlgate API (named by the wallet's address, plus `headers`), its answer checked. */
  async function api<T>(
    path: string,
    isAnswer: (body: unknown) => body is T,
    headers: Record<string, string> = {},
  ): Promise<T> {
    if (!apiUrl) throw new Error('The Crawlgate API URL is unknown: pass apiUrl to createAgent');
    // No redirect followed: an API learned from a 402 could send the wallet's proof on to any host.
    const response = await http(`${apiUrl}${path}`, {
      headers: { 'x-wallet-address': payer.address, ...headers },
      redirect: 'manual',
    });
    const body = await jsonOf(response);
    if (!response.ok) throw new Error(`${path}: ${response.status} ${errorDetailOf(body) ?? 'no detail'}`);
    if (!isAnswer(body)) throw new Error(`${path}: the API's answer is not the one it documents`);
    return body;
  }

  /**
   * X-Wallet-Proof for the payment history, which shows what the chain does not: signed afresh on
   * every call. It expires a little short of the API's limit, so a clock ahead of the API's by up
   * to PROOF_CLOCK_MARGIN_SECONDS is not refused as too far ahead.
   */
  async function historyProof(): Promise<string> {
    if (!apiUrl) throw new Error('The Crawlgate API URL is unknown: pass apiUrl to createAgent');
    const expires = Math.floor(Date.now() / 1000) + WALLET_PROOF_MAX_SECONDS - PROOF_CLOCK_MARGIN_SECONDS;
    // Signed for this API's origin: an apiUrl learned from a hostile site's 402 gets a proof that
    // opens nothing at the real API.
    const message = paymentHistoryMessage(payer.address, new URL(apiUrl).origin, expires);
    return formatWalletProof(expires, await payer.signMessage(message));
  }

  // Opened last: a createAgent that throws on its other options holds no file.
  const channels = new ChannelBook(
    batch?.channelFile ? openChannelFile(batch.channelFile, payer.address, batch.escrows) : undefined,
  );
  return {
    fetch: agentFetch,
    settleRefused: () => held.settle(),
    close: () => channels.close(),
    spent: () => budget.summary(),
    spending: () => budget.current(),
    profile: () => api('/v1/agents/me', isAgentProfile),
    payments: (query = {}) => {
      const params = new URLSearchParams();
      if (query.limit !== undefined) params.set('limit', String(query.limit));
      if (query.cursor !== undefined) params.set('cursor', query.cursor);
      return historyProof().then((proof) =>
        api(`/v1/agents/me/payments${params.size ? `?${params}` : ''}`, isAgentPaymentPage, {
          [WALLET_PROOF_HEADER]: proof,
        }),
      );
    },
    channels: () =>
      channels.all().map((c) => ({
        channelId: c.channelId,
        origin: c.origin,
        receiver: c.config.receiver,
        escrow: c.domain.verifyingContract,
        deposited: c.deposited,
        charged: c.charged,
        withdrawing: c.withdrawing,
      })),
    initiateWithdraw: () => initiateWithdrawals(payer, channels),
    finalizeWithdraw: () => finalizeWithdrawals(payer, channels.all(), (amount) => budget.credit(amount)),
    refund,
  };
}

/** How far ahead of the API's clock the agent's may be when it signs a history proof. */
const PROOF_CLOCK_MARGIN_SECONDS = 30;

function batchOptions(
  options: BatchSettlementOptions | undefined,
):
  | { depositMicros: bigint; escrows: Set<string>; maxChannels: number; channelFile?: string; payAhead: boolean }
  | undefined {
  if (!options) return undefined;
  const depositMicros = amount(options.depositUsd, MAX_BUDGET_MICROS, 'batchSettlement.depositUsd');
  if (depositMicros === 0n) throw new RangeError('batchSettlement.depositUsd: a deposit must be above 0');
  const escrows = options.escrows ?? [X402_BATCH_SETTLEMENT_ADDRESS];
  if (!Array.isArray(escrows) || escrows.length === 0 || !escrows.every((e) => /^0x[0-9a-fA-F]{40}$/.test(e)))
    throw new RangeError('batchSettlement.escrows: a list of escrow contract addresses');
  if (options.channelFile !== undefined && (typeof options.channelFile !== 'string' || options.channelFile === ''))
    throw new RangeError('batchSettlement.channelFile: a file path');
  const maxChannels = options.maxChannels === undefined ? DEFAULT_MAX_CHANNELS : options.maxChannels;
  if (!Number.isInteger(maxChannels) || maxChannels < 1)
    throw new RangeError(`batchSettlement.maxChannels: a whole number of channels from 1, got ${String(maxChannels)}`);
  if (options.payAhead !== undefined && typeof options.payAhead !== 'boolean')
    throw new RangeError('batchSettlement.payAhead: true or false');
  return {
    depositMicros,
    escrows: new Set(escrows.map((e) => e.toLowerCase())),
    maxChannels,
    channelFile: options.channelFile,
    payAhead: options.payAhead === true,
  };
}

function authorizationCap(seconds = MAX_AUTHORIZATION_SECONDS): number {
  if (!Number.isInteger(seconds) || seconds < MIN_AUTHORIZATION_SECONDS || seconds > MAX_AUTHORIZATION_SECONDS) {
    throw new RangeError(
      `maxAuthorizationSeconds: a whole number of seconds from ${MIN_AUTHORIZATION_SECONDS} to ${MAX_AUTHORIZATION_SECONDS}, got ${seconds}`,
    );
  }
  return seconds;
}

function amount(value: string | number, max: bigint, name: string): bigint {
  const parsed = parseUsdAmount(value, max);
  if (!parsed.ok) throw new RangeError(`${name}: ${parsed.msg}`);
  return parsed.micros;
}

/** The PAYMENT-SIGNATURE of a batch-settlement payload (a voucher, a deposit, a refund) for `offer`'s requirement. */
function batchPaymentHeader(offer: Offer, payload: Record<string, unknown>): string {
  return encodeBase64Json({ x402Version: 2, accepted: offer.v2!.accepted, payload, resource: offer.v2!.resource });
}

/** `token` when it is what the payment at `paidAt` bought (tokenBoughtAt); another gate's or page's is none. */
const boughtToken = (token: string | null | undefined, paidAt: PaidAt) =>
  token && tokenBoughtAt(token, paidAt) ? token : undefined;

/**
 * The access token a verify_url's answer (its status and JSON body) gives for the payment at
 * `paidAt`: a 200's, of its gate. A verify_url, or a front standing in for one, may answer another's.
 */
function boughtTokenOf(paidAt: PaidAt, status: number, body: unknown): string | undefined {
  return status === 200 ? boughtToken(verifyAnswerOf(body).accessToken, paidAt) : undefined;
}

/** Whether an answer to a payment shows what it bought: settled, or a token of its gate (or page). */
function boughtWithAnswer(answer: Response, paidAt: PaidAt): boolean {
  return settlementIn(answer)?.success === true || tokenBoughtAt(answer.headers.get(TOKEN_HEADER), paidAt);
}

/** A body as JSON, or undefined when it is not JSON, too large or too slow (MAX_PAYMENT_ANSWER_MS): a refusal's body is read for its reason only. */
const jsonOf = (response: Response): Promise<unknown> =>
  cappedJson(response, MAX_PAYMENT_ANSWER_BYTES, MAX_PAYMENT_ANSWER_MS);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A voucher sent for a page whose answer was lost, remembered while its gate may take it again (gateHoldUntil). */
function lostVoucher(
  channelKey: string,
  channelId: Hex,
  total: bigint,
  header: string,
  offer: Offer,
  sentAt: number,
  tokenLifeMs: number,
): LostVoucher {
  const gateId = offer.v2?.accepted.extra?.gate_id;
  const until = gateHoldUntil(typeof gateId === 'string' ? readGate(gateId)?.exp : undefined);
  return { channelKey, channelId, total, header, offer, sentAt, until, over: until + tokenLifeMs };
}

/** The last moment a payment (its header) sent at `sentAt` could have bought a token: an exact authorization's validBefore, else its send. */
function lastIssueOf(header: [string, string], sentAt: number): number {
  const validBefore = authorizationOfHeader(header[1])?.validBefore;
  return validBefore === undefined ? sentAt : Math.max(sentAt, Number(validBefore) * 1000);
}

type ChainState = Awaited<ReturnType<typeof finalStateOf>> | 'failed' | 'none';

/**
 * Whether the agent cannot read what became of an authorization: no chain client, another chain
 * than the client's, or a chain not moving (an idle local one mines only on demand). A failing RPC
 * is not that: it is asked again.
 */
const unreadable = (state: ChainState) => state === 'none' || state === 'other-chain' || state === 'stale';

/** Whether an answer from a verify_url is its API's refusal (a status it refuses with, and its detail). */
const refusedByItsApi = (asked: Response | undefined, body: unknown) =>
  asked !== undefined && API_REFUSALS.has(asked.status) && errorDetailOf(body) !== undefined;

/**
 * Whether two URLs name the same page as its gate reads it (requestPath, as in TokenCache.key),
 * whatever spelling of their site.
 */
const samePath = (one: string, other: string): boolean =>
  requestPath(new URL(one).pathname) === requestPath(new URL(other).pathname);

/**
 * Whether two URLs are pages of one site, as far as the agent can tell: the same scheme, port and
 * host as TokenCache keys it (a trailing dot, an IPv4-mapped address aside), every loopback name one host.
 */
const sameSite = (one: string, other: string): boolean => {
  const [a, b] = [one, other].map((url) => new URL(TokenCache.originOf(TokenCache.key(new URL(url)))));
  return (
    a.protocol === b.protocol &&
    a.port === b.port &&
    (a.hostname === b.hostname || (isLoopbackHost(a.hostname) && isLoopbackHost(b.hostname)))
  );
};

/** The authorization an exact payment sent signed, as the chain knows it; null when its header shows none. */
function authorizationOf({
  offer,
  header,
}: Pick<UnconfirmedAuthorization, 'offer' | 'header'>): Omit<HeldAuthorization, 'reservation'> | null {
  const authorization = authorizationOfHeader(header[1]);
  return authorization && { chainId: offer.chainId, asset: offer.asset, ...authorization };
}

/** When whatever became of this authorization is final: past its validBefore, with a margin for the chain's clock. */
function authorizationOverAt({ header, until }: UnconfirmedAuthorization): number {
  const validBefore = authorizationOfHeader(header[1])?.validBefore;
  return validBefore === undefined ? until : Number(validBefore) * 1000 + HELD_PAGE_MARGIN_MS;
}
