/*
 * The prices a 402 names, read as the agent reads them when it pays (its own readOffers: the x402
 * v2 PAYMENT-REQUIRED header's offers, then the x402 v1 body's, each with the token's EIP-712
 * domain), and the one it would pay chosen as it chooses (the first "exact" offer its networks
 * allow, domain included). A quote that read the 402 its own way could name a price, or a payee,
 * the payment never uses.
 */

import { formatMicrosUsd, findNetworkByX402 } from '@crawlgate/core';
import {
  chainIdOf,
  exactOffers,
  firstAllowed,
  readOffers,
  type Allowed,
  type AllowedNetwork,
  type Offer,
} from '@crawlgate/agent';

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

export interface Offers402 {
  /** Every offer the agent can read, v2 first. */
  offers: QuotedOffer[];
  /** The one of `offers` the agent would pay (within its networks; the price limits are not judged here), if any. */
  payable: QuotedOffer | undefined;
}

export async function offersOf402(response: Response, allowed: readonly Allowed[]): Promise<Offers402> {
  const read = exactOffers(await readOffers(response));
  const offers = read.map(quoted);
  const payable = firstAllowed(read, allowed);
  return { offers, payable: payable && offers[read.indexOf(payable)] };
}

function quoted(offer: Offer): QuotedOffer {
  return {
    x402_version: offer.version,
    network: offer.network,
    asset: offer.asset,
    pay_to: offer.payTo,
    amount: offer.amount.toString(),
    price_usd: formatMicrosUsd(offer.amount),
  };
}

/**
 * Whether the agent's `networks` cover a pay.json offer's chain and token. (pay.json names no
 * EIP-712 domain: the page's own 402 is what the agent pays, and is judged when it pays.)
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
