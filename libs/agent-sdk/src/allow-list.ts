import { findNetworkByX402, isEvmAddress, type NetworkName } from '@crawlgate/core';
import { PaymentNotAllowedError, UnsupportedPaymentError, type RefusedOffer } from './errors';
import { chainIdOf, type Offer } from './offers';

/**
 * A token the agent may pay with. It must be a USD stablecoin with 6 decimals: prices are read as
 * micro-USD, which is what makes `maxPriceUsd` and `budgetUsd` mean dollars.
 */
export interface AllowedAsset {
  /** A network of core's registry ("base", "base-sepolia", "local") or any CAIP-2 "eip155:<chainId>". */
  network: NetworkName | `eip155:${number}`;
  /** The token contract. */
  asset: `0x${string}`;
  /**
   * The token's EIP-712 domain; a site's `extra` must match it. Defaults to the registry's USDC
   * domain when `network` is a registry network; on other chains, unset means "as the site says".
   */
  domain?: { name: string; version: string };
}

/** A registry network by name means its USDC; `local` has none until the chain starts, so it needs an AllowedAsset. */
export type AllowedNetwork = NetworkName | AllowedAsset;

export type RefusalReason = RefusedOffer['reason'];

export interface Allowed {
  chainId: number;
  asset: string;
  domain: { name: string; version: string } | undefined;
}

/** Real USDC on Base and Base Sepolia: the only assets paid unless the caller says otherwise. */
export const DEFAULT_NETWORKS: readonly AllowedNetwork[] = ['base', 'base-sepolia'];

/** Checks the option once, at createAgent, so a typo fails loudly instead of refusing every site. */
export function allowList(networks: readonly AllowedNetwork[] = DEFAULT_NETWORKS): Allowed[] {
  if (!Array.isArray(networks) || networks.length === 0) throw new RangeError('networks: allow at least one network');
  return networks.map((entry) => {
    const { network, asset, domain } =
      typeof entry === 'string' ? { network: entry, asset: undefined, domain: undefined } : entry;
    const chainId = chainIdOf(network);
    if (chainId === null || !Number.isSafeInteger(chainId) || chainId <= 0)
      throw new RangeError(
        `networks: unknown network "${String(network)}"; use one of base, base-sepolia, local, or "eip155:<chainId>"`,
      );
    const known = findNetworkByX402(network);
    const address = asset ?? known?.usdc.address;
    if (!address)
      throw new RangeError(
        `networks: the USDC of "${network}" is deployed at run time; allow it as { network: '${network}', asset: '0x…' }`,
      );
    if (!isEvmAddress(address)) throw new RangeError(`networks: "${String(address)}" is not an EVM address`);
    // The registry's domain applies to its own USDC, and to whatever the local chain deployed as USDC.
    const registryUsdc =
      known && (known.usdc.address === null || known.usdc.address.toLowerCase() === address.toLowerCase());
    return {
      chainId,
      asset: address.toLowerCase(),
      domain: domain ?? (registryUsdc ? { name: known.usdc.name, version: known.usdc.version } : undefined),
    };
  });
}

/** Why `offer` may not be paid, or null when it may. */
function refusal(offer: Offer, allowed: readonly Allowed[]): RefusalReason | null {
  const onChain = allowed.filter((entry) => entry.chainId === offer.chainId);
  if (onChain.length === 0) return 'network_not_allowed';
  const match = onChain.find((entry) => entry.asset === offer.asset.toLowerCase());
  if (!match) return 'asset_not_allowed';
  // Otherwise the site could have us sign under a domain of its choosing.
  if (match.domain && (match.domain.name !== offer.domain.name || match.domain.version !== offer.domain.version))
    return 'domain_mismatch';
  return null;
}

/** The first offer the agent may pay, or undefined: for an optional way to pay, where a refusal is no error. */
export function firstAllowed(offers: readonly Offer[], allowed: readonly Allowed[]): Offer | undefined {
  return offers.find((offer) => refusal(offer, allowed) === null);
}

/** The first offer the agent may pay (offers come v2 first); refuses with every reason when there is none. */
export function chooseOffer(url: string, offers: readonly Offer[], allowed: readonly Allowed[]): Offer {
  if (offers.length === 0)
    throw new UnsupportedPaymentError(
      `${url} asks for payment, but offers no "exact" payment on an EVM chain this agent knows`,
    );
  const refused: RefusedOffer[] = [];
  for (const offer of offers) {
    const reason = refusal(offer, allowed);
    if (reason === null) return offer;
    refused.push({ network: offer.network, asset: offer.asset, amount: offer.amount.toString(), reason });
  }
  // The first few say why; a site naming thousands must not make the error (and the logs it reaches) huge.
  throw new PaymentNotAllowedError(url, refused.slice(0, MAX_REFUSED_LISTED));
}

/** The most refused offers a PaymentNotAllowedError lists. */
const MAX_REFUSED_LISTED = 10;
