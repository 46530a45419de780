export { createAgent, type Agent, type AgentOptions, type PaymentEvent } from './agent';
export { BudgetExceededError, PaymentFailedError, PriceTooHighError, UnsupportedPaymentError } from './errors';
export type { Offer } from './offers';
