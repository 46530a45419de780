export {
  createAgent,
  type Agent,
  type AgentOptions,
  type AgentRequestInit,
  type BatchSettlementOptions,
  type ChannelSummary,
  type PaymentEvent,
  type UnconfirmedPaymentEvent,
} from './agent';
export type { WithdrawalStep } from './withdrawals';
export type { HeldOutcome } from './held-authorizations';
/** What profile() and payments() answer: the Crawlgate API's agent endpoints, as @crawlgate/core defines them. */
export type { AgentPayment, AgentPaymentPage, AgentProfile, PageQuery } from '@crawlgate/core';
export { allowList, firstAllowed, type Allowed, type AllowedAsset, type AllowedNetwork } from './allow-list';
export {
  BudgetExceededError,
  SiteBudgetExceededError,
  InsecureConnectionError,
  PaymentFailedError,
  PaymentNotAllowedError,
  PriceTooHighError,
  UnsupportedPaymentError,
  type RefusedOffer,
} from './errors';
/** How the agent reads a 402's offers and picks the one it pays: for a quote that agrees with the payment. */
export { chainIdOf, exactOffers, readOffers, type Offer } from './offers';
export type { BudgetSummary } from './budget';
export { createMemoryBudgetStore, type BudgetState, type BudgetStore, type Reservation } from './budget-store';
export { createFileBudgetStore, type FileBudgetStoreOptions } from './file-budget-store';
export {
  generateWebBotAuthKey,
  webBotAuthDirectory,
  webBotAuthDirectoryResponse,
  WEB_BOT_AUTH_DIRECTORY_PATH,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
  type KeyDirectoryEntry,
  type WebBotAuthOptions,
} from './web-bot-auth';
