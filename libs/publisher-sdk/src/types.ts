/*
 * Request and response bodies of the publisher endpoints, exactly as the API sends them
 * (snake_case). Defined once in @crawlgate/core, which the API's views implement; exported here
 * under the names this package has always used.
 */

export type {
  PriceUsd,
  RegisterInput,
  LoginInput,
  ChangePasswordInput,
  UpdatePublisherInput,
  Publisher,
  RegisteredPublisher,
  IssuedApiKey,
  CreateSiteInput,
  UpdateSiteInput,
  Site,
  SiteList,
  CreatedSite,
  DeletedSite,
  RotatedSiteToken,
  SecretRotation,
  PriceRuleInput,
  PricingInput,
  PricingApplied,
  PricingRule as PriceRule,
  Pricing,
  PriceResolution,
  StatsQuery,
  TopPath,
  TopAgent,
  StatsDay,
  SiteStats,
  PublisherStats,
  PublisherTopPath,
  PageQuery,
  SitePayment,
  SitePaymentPage,
  PaymentScheme,
  SiteChannelsView,
  SiteChannelView,
  CrawlerAction,
  CrawlerView,
  CrawlerDayView,
  SiteCrawlersView,
  BotAction,
  BotCategory,
  BotPolicyInput,
  SiteBotPolicy,
} from '@crawlgate/core';

// Errors

export type { ValidationItem } from '@crawlgate/core';
