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
  override readonly name = 'BudgetExceededError';
  constructor(
    readonly url: string,
    readonly priceUsd: string,
    readonly remainingUsd: string,
  ) {
    super(`${url} costs ${priceUsd} USD, but only ${remainingUsd} USD of the budget is left`);
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
