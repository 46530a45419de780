import {
  AUTHORIZATION_CLOCK_SKEW_SECONDS,
  BATCH_SETTLEMENT_ABI,
  batchSettlementDomain,
  CHANNEL_CONFIG_TYPES,
  randomHex32,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  VOUCHER_TYPES,
  X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  type BatchSettlementDomain,
  type ChannelConfig,
  type Hex,
} from '@crawlgate/core';
import {
  encodeAbiParameters,
  hashTypedData,
  isAddressEqual,
  keccak256,
  recoverTypedDataAddress,
  type PublicClient,
} from 'viem';
import type { ChannelFile } from './channel-file';
import type { Offer } from './offers';
import type { Payer } from './payer';

/*
 * The agent's x402 batch-settlement channels, in memory (and in a file, channel-file.ts, when
 * asked): one per site origin and channel terms, with what the agent deposited into it, what the
 * site confirmed it charged, and the highest voucher the agent ever sent. Every voucher's total is checked here against those numbers, so a
 * site can never have the agent sign beyond its deposits or below what the site already confirmed.
 */

export interface Channel {
  /** The origin it was opened for: a voucher of this channel goes to that origin only. */
  origin: string;
  config: ChannelConfig;
  channelId: Hex;
  domain: BatchSettlementDomain;
  /** Deposit authorizations sent, in atomic units: no voucher is ever signed above this. */
  deposited: bigint;
  /**
   * The total the site last confirmed it charged (a paid answer's settlement header, or a corrective
   * 402 we could check). A voucher answered without either (a proxy's 429 or 5xx) leaves it as it was.
   */
  charged: bigint;
  /** The highest voucher total sent: whoever got it can claim up to it. */
  signed: bigint;
  /**
   * Totals sent above `charged` whose answer never said whether the site took them (none came, or a
   * proxy's 429 or 5xx): the only ones a corrective 402 may later say were charged. A total the
   * site refused is not among them, nor is one never sent.
   */
  unanswered: bigint[];
  /** A withdrawal was started: the channel takes no more vouchers. */
  withdrawing: boolean;
  /** The cooperative refunds' transactions the budget was credited with: never credited again. */
  refundTxs: Hex[];
}

/**
 * Channels by origin and terms; a key's operations run one at a time (a voucher's total depends on
 * the one before). With a file, it starts from the file's channels and save() writes them back.
 */
export class ChannelBook {
  private readonly channels = new Map<string, Channel>();
  /** Every channel ever opened, those being withdrawn included. */
  private readonly opened: Channel[] = [];
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly file?: ChannelFile) {
    for (const channel of file?.channels ?? []) this.set(ChannelBook.keyOf(channel), channel);
  }

  static key(origin: string, offer: Offer): string {
    const b = offer.batch!;
    return termsKey(origin, offer.chainId, b.escrow, offer.payTo, b.receiverAuthorizer, offer.asset, b.withdrawDelay);
  }

  /** The key of the offers `channel` was opened for (newChannel takes these terms from the offer). */
  static keyOf({ origin, domain, config: c }: Channel): string {
    return termsKey(
      origin,
      domain.chainId,
      domain.verifyingContract,
      c.receiver,
      c.receiverAuthorizer,
      c.token,
      c.withdrawDelay,
    );
  }

  get(key: string): Channel | undefined {
    const channel = this.channels.get(key);
    return channel && !channel.withdrawing ? channel : undefined;
  }

  set(key: string, channel: Channel): void {
    if (!this.opened.includes(channel)) this.opened.push(channel);
    if (!channel.withdrawing) this.channels.set(key, channel);
  }

  all(): Channel[] {
    return [...this.opened];
  }

  /** The channels of `origin` that take vouchers (one being withdrawn is coming back already). */
  ofOrigin(origin: string): Channel[] {
    return this.opened.filter((channel) => channel.origin === origin && !channel.withdrawing);
  }

  /** Drops a channel opened here that never came to hold anything (its first deposit was not made). */
  forget(key: string, channel: Channel): void {
    if (this.channels.get(key) === channel) this.channels.delete(key);
    const index = this.opened.indexOf(channel);
    if (index >= 0) this.opened.splice(index, 1);
  }

  /** Lets another agent open the file; this book then pays no more vouchers (save() throws). */
  close(): void {
    this.file?.release();
  }

  /** Writes every channel to the file, if there is one; throws when it cannot. */
  save(): void {
    this.file?.save(this.opened);
  }

  /**
   * save() after an answer: the payment stands whatever the disk says. A write that failed here is
   * made by the next save; until then a restarted agent is behind the site, and the site's
   * corrective 402 (checked against the file's highest voucher, written before it left) catches it up.
   */
  saveAfterAnswer(): void {
    try {
      this.save();
    } catch {
      // see above
    }
  }

  /** Runs `task` after every earlier task of `key` has finished. */
  async exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.queues.get(key) ?? Promise.resolve();
    const run = before.then(task, task);
    const settled = run.catch(() => undefined);
    this.queues.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.queues.get(key) === settled) this.queues.delete(key);
    }
  }
}

function termsKey(...terms: (string | number)[]): string {
  return terms.join('|').toLowerCase();
}

/** A new channel for `offer`'s terms: the agent is payer and voucher signer, with a random salt. */
export function newChannel(origin: string, offer: Offer, payer: Hex): Channel {
  const b = offer.batch!;
  const config: ChannelConfig = {
    payer,
    payerAuthorizer: payer,
    receiver: offer.payTo,
    receiverAuthorizer: b.receiverAuthorizer,
    token: offer.asset,
    withdrawDelay: b.withdrawDelay,
    salt: randomHex32(),
  };
  const domain = batchSettlementDomain(offer.chainId, b.escrow);
  const channelId = hashTypedData({
    domain,
    types: CHANNEL_CONFIG_TYPES,
    primaryType: 'ChannelConfig',
    message: config,
  });
  return {
    origin,
    config,
    channelId,
    domain,
    deposited: 0n,
    charged: 0n,
    signed: 0n,
    unanswered: [],
    withdrawing: false,
    refundTxs: [],
  };
}

/** What a page's payment attempts signed: the channel's signed total before them, its unanswered totals then, and each total sent. */
export interface PageVouchers {
  signedBefore: bigint;
  unansweredBefore: ReadonlySet<bigint>;
  sent: Set<bigint>;
}

/** Enough for a site whose answers are lost a few times in a row at different prices; past it, the oldest is let go (its correction would be refused: the agent stops, it never overpays). */
const MAX_UNANSWERED = 16;

export function pageVouchers(channel: Channel): PageVouchers {
  return { signedBefore: channel.signed, unansweredBefore: new Set(channel.unanswered), sent: new Set() };
}

/** Records `total` as sent and not answered yet; false when it was already. */
export function markUnanswered(channel: Channel, total: bigint): boolean {
  if (channel.unanswered.includes(total)) return false;
  channel.unanswered.push(total);
  if (channel.unanswered.length > MAX_UNANSWERED) channel.unanswered.shift();
  return true;
}

/** The site said `total` was not taken (or it was never sent). */
export function markAnswered(channel: Channel, total: bigint): void {
  channel.unanswered = channel.unanswered.filter((t) => t !== total);
}

/**
 * Lowers what the channel counts as deposited to `to`, never below what the site charged: the
 * escrow may hold more than the agent knew, and a file charged above its deposits is refused whole
 * on the next start (every channel in it out of reach).
 */
export function lowerDeposited(channel: Channel, to: bigint): void {
  channel.deposited = to > channel.charged ? to : channel.charged;
}

/** The site confirmed the channel charged `charged`: no total at or below it is unanswered any more. */
export function markCharged(channel: Channel, charged: bigint): void {
  channel.charged = charged;
  channel.unanswered = channel.unanswered.filter((t) => t > charged);
}

/**
 * What a corrective 402 says the channel has been charged, if the agent can believe it; otherwise
 * why not. Never below what the site already confirmed (it would have the agent pay again for money
 * it already holds vouchers for); above what the agent ever sent only with the agent's own
 * signature for exactly that total. Between the two, only the total of a voucher sent whose answer
 * said nothing of it: one the site refused (it holds it all the same) is not, or a site refusing a
 * page would have the next page pay for it as well.
 */
export async function checkedCorrection(
  channel: Channel,
  offer: Offer,
  page: PageVouchers,
): Promise<{ ok: true; charged: bigint } | { ok: false; detail: string }> {
  const state = offer.batch?.channelState;
  if (!state || state.channelId.toLowerCase() !== channel.channelId.toLowerCase())
    return { ok: false, detail: 'the 402 states no charge for this channel' };
  const claimed = state.chargedCumulativeAmount;
  if (claimed < channel.charged)
    return {
      ok: false,
      detail: `the site says the channel was charged ${claimed}, below the ${channel.charged} it already confirmed`,
    };
  if (claimed > channel.deposited)
    return {
      ok: false,
      detail: `the site says the channel was charged ${claimed}, above the ${channel.deposited} deposited`,
    };
  // Above what was signed before this page, only the agent's own voucher for exactly the claim, and
  // never one sent for this page: a site that took this page's voucher and answered 402 would
  // otherwise have the agent count it as charged and pay the page again.
  if (claimed > page.signedBefore && page.sent.has(claimed))
    return {
      ok: false,
      detail: `the site says the channel was charged ${claimed}, the total of a voucher this agent sent for this page and the site refused`,
    };
  if (claimed > channel.charged && claimed <= page.signedBefore && !page.unansweredBefore.has(claimed))
    return {
      ok: false,
      detail: `the site says the channel was charged ${claimed}, not the total of a voucher of this agent whose answer was lost (one the site refused, or none)`,
    };
  if (claimed > page.signedBefore) {
    const voucher = offer.batch?.voucherState;
    if (
      !voucher ||
      voucher.signedMaxClaimable !== claimed ||
      !(await isOurVoucher(channel, claimed, voucher.signature))
    ) {
      return {
        ok: false,
        detail: `the site says the channel was charged ${claimed}, above the ${page.signedBefore} this agent signed before this page, without this agent's voucher for it`,
      };
    }
  }
  return { ok: true, charged: claimed };
}

async function isOurVoucher(channel: Channel, total: bigint, signature: Hex): Promise<boolean> {
  try {
    const signer = await recoverTypedDataAddress({
      domain: channel.domain,
      types: VOUCHER_TYPES,
      primaryType: 'Voucher',
      message: { channelId: channel.channelId, maxClaimableAmount: total },
      signature,
    });
    return isAddressEqual(signer, channel.config.payerAuthorizer);
  } catch {
    return false;
  }
}

export function signVoucher(payer: Payer, channel: Channel, total: bigint): Promise<Hex> {
  return payer.signTypedData({
    domain: channel.domain,
    types: VOUCHER_TYPES,
    primaryType: 'Voucher',
    message: { channelId: channel.channelId, maxClaimableAmount: total },
  });
}

/** The EIP-3009 nonce of a deposit authorization with `salt`: bound to the channel (the collector checks it). */
export function depositNonce(channelId: Hex, salt: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }], [channelId, BigInt(salt)]));
}

/**
 * The payer's EIP-3009 ReceiveWithAuthorization of `amount` to x402's deposit collector, as x402's
 * client signs it: its nonce binds it to this channel, and only the collector (called by the
 * escrow it was built for) can receive it. Valid for at most `validForSeconds`.
 */
export async function signDeposit(
  payer: Payer,
  channel: Channel,
  offer: Offer,
  amount: bigint,
  validForSeconds: number,
) {
  const salt = randomHex32();
  const now = BigInt(Math.floor(Date.now() / 1000));
  const validAfter = now - BigInt(AUTHORIZATION_CLOCK_SKEW_SECONDS);
  const validBefore = now + BigInt(validForSeconds);
  const nonce = depositNonce(channel.channelId, salt);
  const signature = await payer.signTypedData({
    domain: { ...offer.domain, chainId: offer.chainId, verifyingContract: offer.asset },
    types: { ReceiveWithAuthorization: TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization },
    primaryType: 'ReceiveWithAuthorization',
    message: {
      from: channel.config.payer,
      to: X402_ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      value: amount,
      validAfter,
      validBefore,
      nonce,
    },
  });
  return {
    amount: amount.toString(),
    authorization: {
      erc3009Authorization: { validAfter: validAfter.toString(), validBefore: validBefore.toString(), salt, signature },
    },
  };
}

/** The channel as its escrow holds it now: what was deposited into it (less refunds) and claimed from it. */
export async function escrowChannelOf(
  reader: PublicClient,
  channel: Pick<Channel, 'channelId' | 'domain'>,
): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = (await reader.readContract({
    address: channel.domain.verifyingContract,
    abi: BATCH_SETTLEMENT_ABI,
    functionName: 'channels',
    args: [channel.channelId],
  })) as readonly [bigint, bigint];
  return { balance, totalClaimed };
}
