// @crawlgate/middleware: the framework-free gate. Adapters live in @crawlgate/middleware/{express,fastify,fetch,nest}.
export {
  createCrawlgate,
  PAY_JSON_PATH,
  type Crawlgate,
  type CrawlgateOptions,
  type CrawlgateRequest,
  type CrawlgateLogger,
} from './crawlgate';
export type { Decision } from './decision';
export { CrawlgateApiError, type SiteOffer, type GateOffer, type PaidGate } from './api-client';
export {
  classifyVisitor,
  isAlwaysFreePath,
  botPolicyProblems,
  BOT_CATALOGUE,
  ALWAYS_FREE_PATHS,
  DEFAULT_CATEGORY_ACTIONS,
  type BotAction,
  type BotCategory,
  type BotPolicy,
  type BotSignature,
  type Visitor,
} from './bots';
export { identifyVisitor, type AddressChecker, type Identified } from './bots/identify';
export {
  createWebBotAuth,
  redisReplayStore,
  type RedisReplayStoreOptions,
  type RedisSetClient,
  type ReplayStore,
  type SignatureCheck,
  type WebBotAuth,
  type WebBotAuthOptions,
} from './web-bot-auth';
export {
  createCrawlerIps,
  type CrawlerIps,
  type CrawlerIpsOptions,
  type DnsResolver,
  type ReverseDnsOptions,
} from './crawler-ips';
export { buildPayJson, type PayJson } from './pay-json';
export {
  buildRslDocument,
  DEFAULT_LICENSE_PATH,
  RSL_MEDIA_TYPE,
  type LicensingOptions,
  type UsagePreferences,
} from './license';
export { robotsTxt, type RobotsTxtSignals } from './robots';
