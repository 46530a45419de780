export { ConfigError, DEFAULT_USER_AGENT, readConfig, type Env, type McpConfig } from './config';
export { startHttpServer, type HttpServer } from './http';
export type { PageSpend } from './payments-ledger';
export type { Quote, QuoteSource } from './quote';
export type { QuotedOffer } from './quoted-offers';
export type { Refusal, RefusalCode } from './refusals';
export { createMcpServer } from './server';
export { createWalletSession, describeSession, type SessionOptions, type WalletSession } from './session';
export type { FetchedPage } from './tools/fetch-page';
