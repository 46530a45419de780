/*
 * The prices a 402 names, for quoting only: the x402 v2 PAYMENT-REQUIRED header's offers, then
 * the x402 v1 body's. Paying reads the same 402 again inside the agent, which checks far more
 * (EIP-712 domains, time limits); a quote needs the amount, the chain and token, and who is paid.
 */

import {
  cappedJson,
  decodeBase64Json,
  findNetworkByX402,
  formatMicrosUsd,
  MAX_PAYMENT_ANSWER_BYTES,
  untrusted,
  type GateOffer,
  type PaymentRequiredV2,
  type PaymentRequirementsV1,
  type PaymentRequirementsV2,
  type Untrusted,
} from '@crawlgate/core';
import type { AllowedNetwork } from '@crawlgate/agent';

export interface QuotedOffer {
  /** 1 (402 body), 2 (PAYMENT-REQUIRED header), or null (from pay.json). */
  x402_version: 1 | 2 | null;
  /** As the site names it: an x402 v1 name ("base") or CAIP-2 ("eip155:8453"). */
  network: string;
  asset: string;
  pay_to: string;
  /** Atomic units of the token (6 decimals: micro-USD). */
  amount: string;
  price_usd: string;
}

/** What a quote reads of a requirement, named alike in x402 v1 and v2. */
type Requirement = Untrusted<
  Pick<PaymentRequirementsV1 & PaymentRequirementsV2, 'scheme' | 'network' | 'asset' | 'payTo'>
>;

export async function offersOf402(response: Response): Promise<QuotedOffer[]> {
  const header = response.headers.get('payment-required');
  const v2 = header ? untrusted<PaymentRequiredV2>(decodeBase64Json(header)) : undefined;
  // A Crawlgate gate's 402 body (GateOffer) holds x402 v1's (PaymentRequiredV1) `accepts`.
  const body = untrusted<GateOffer>(await cappedJson(response, MAX_PAYMENT_ANSWER_BYTES));
  return [
    ...listOf<PaymentRequirementsV2>(v2?.accepts).map((r) => offer(2, r, r.amount)),
    ...listOf<PaymentRequirementsV1>(body?.accepts).map((r) => offer(1, r, r.maxAmountRequired)),
  ].filter((o): o is QuotedOffer => o !== null);
}

function listOf<T>(value: unknown): Untrusted<T>[] {
  return Array.isArray(value)
    ? value.map((r: unknown) => untrusted<T>(r)).filter((r): r is Untrusted<T> => r !== undefined)
    : [];
}

function offer(version: 1 | 2, r: Requirement, amount: unknown): QuotedOffer | null {
  if (
    r.scheme !== 'exact' ||
    typeof r.network !== 'string' ||
    typeof r.asset !== 'string' ||
    typeof r.payTo !== 'string'
  )
    return null;
  if (typeof amount !== 'string' || !/^\d{1,30}$/.test(amount)) return null;
  return {
    x402_version: version,
    network: r.network,
    asset: r.asset,
    pay_to: r.payTo,
    amount,
    price_usd: formatMicrosUsd(BigInt(amount)),
  };
}

/**
 * Whether the agent's `networks` cover the offer's chain and token. (The agent also checks the
 * token's EIP-712 domain when it pays; a quote cannot see that refusal coming.)
 */
export function networkAllows(
  networks: readonly AllowedNetwork[],
  offer: Pick<QuotedOffer, 'network' | 'asset'>,
): boolean {
  const chainId = chainIdOf(offer.network);
  return networks.some((entry) => {
    const { network, asset } =
      typeof entry === 'string' ? { network: entry, asset: findNetworkByX402(entry)?.usdc.address } : entry;
    return chainId !== null && chainIdOf(network) === chainId && asset?.toLowerCase() === offer.asset.toLowerCase();
  });
}

function chainIdOf(network: string): number | null {
  const caip = /^eip155:(\d+)$/.exec(network);
  return caip ? Number(caip[1]) : (findNetworkByX402(network)?.chainId ?? null);
}
