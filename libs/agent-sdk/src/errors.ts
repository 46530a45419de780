/** The agent refused to pay: the price is above `maxPriceUsd`. Nothing was paid. */
export class PriceTooHighError extends Error {
  override readonly name = 'PriceTooHighError';
  constructor(
    readonly url: string,
    readonly priceUsd: string,
    readonly maxPriceUsd: string,
  ) {
    super(`${url} costs ${priceUsd} USD, above the agent's maximum of ${maxPriceUsd} USD`);
  }
}

/** The agent refused to pay: the price is above what is left of `budgetUsd`. Nothing was paid. */
export class BudgetExceededError extends Error {
  override readonly name: string = 'BudgetExceededError';
  constructor(
    readonly url: string,
    readonly priceUsd: string,
    readonly remainingUsd: string,
  ) {
    super(`${url} costs ${priceUsd} USD, but only ${remainingUsd} USD of the budget is left`);
  }
}

/** The page costs more than its site may still take (maxSpendPerSiteUsd); the whole budget may have more left. */
export class SiteBudgetExceededError extends BudgetExceededError {
  override readonly name: string = 'SiteBudgetExceededError';
  constructor(
    url: string,
    priceUsd: string,
    remainingUsd: string,
    /** The site: its domain (its last two labels), an IPv4 address or an IPv6 /48. */
    readonly site: string,
  ) {
    super(url, priceUsd, remainingUsd);
    this.message = `${url} costs ${priceUsd} USD, but its site ${site} may take only ${remainingUsd} USD more (maxSpendPerSiteUsd)`;
  }
}

/**
 * The agent refused to pay: the 402, or a redirect on the way to it, came over plain http from a
 * host off loopback, where anyone on the network between could have named their own payTo. Nothing
 * was signed. `payOverHttp` allows it.
 */
export class InsecureConnectionError extends Error {
  override readonly name = 'InsecureConnectionError';
  constructor(readonly url: string) {
    super(
      `${url} asked for payment over plain http (or was reached through it): a network between could have changed whom to pay; nothing was paid (payOverHttp allows it)`,
    );
  }
}

/** A payment was attempted and refused, or could not be completed; `reason` is the server's x402 reason code. */
export class PaymentFailedError extends Error {
  override readonly name = 'PaymentFailedError';
  constructor(
    readonly url: string,
    readonly reason: string,
    detail: string,
  ) {
    super(`Paying for ${url} failed (${reason}): ${detail}`);
  }
}

/** The 402 asked for something this agent cannot pay: no "exact" EVM offer on a chain it knows. */
export class UnsupportedPaymentError extends Error {
  override readonly name = 'UnsupportedPaymentError';
}

/** One offer the agent would not pay, and why. */
export interface RefusedOffer {
  network: string;
  asset: string;
  amount: string;
  reason: 'network_not_allowed' | 'asset_not_allowed' | 'domain_mismatch';
}

/** The agent refused to pay: every offer was in a network, token or EIP-712 domain outside its `networks`. Nothing was signed. */
export class PaymentNotAllowedError extends Error {
  override readonly name = 'PaymentNotAllowedError';
  constructor(
    readonly url: string,
    readonly refused: RefusedOffer[],
  ) {
    super(
      `${url} asks for payment only in what this agent does not pay with: ${refused.map((offer) => `${offer.amount} of ${offer.asset} on ${offer.network} (${offer.reason})`).join('; ')}`,
    );
  }
}
