/*
 * The real Crawlgate API, started in-process on this jest worker's chain (reverted at close), with
 * one priced site (default 0.01 USD, /free/* free, /cheap/* 0.001) and a funded agent wallet.
 */

import { encodeBase64Json } from '@crawlgate/core';
import type { PrivateKeyAccount } from 'viem';
import { freePort } from '../../../../apps/api/test/free-port';
import { pricedSite, type TestPublisher, type TestSite } from '../../../../apps/api/test/fixtures';
import { startTestApp, type TestApp, type TestAppOptions } from '../../../../apps/api/test/test-app';
import { fundUsdc, newWallet, signPayment, type GateOfferBody } from '../../../../apps/api/test/test-agent';
import type { CrawlgateOptions } from '../../../../libs/middleware/src/crawlgate';
import { crawlerRanges } from './crawler-ranges';

export const GPTBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
export const CLAUDEBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
export const AHREFSBOT = 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)';
export const BROWSER =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
/**
 * An API that is down: a loopback port that was just free, so connecting is refused at once.
 * (Not port 9 itself: fetch refuses "bad ports" before trying, which would test less.)
 */
export async function deadApiUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

export { freePort };

export interface GatedSite {
  app: TestApp;
  site: TestSite;
  publisher: TestPublisher;
  payTo: `0x${string}`;
  /** The account of payTo: it signs the proof another publisher needs to name payTo too. */
  payee: PrivateKeyAccount;
  agent: ReturnType<typeof newWallet>;
  /** Gate options for this site; the logger keeps warnings in `warnings`; loopback is every crawler operator's network (crawler-ranges.ts). */
  options(overrides?: Partial<CrawlgateOptions>): CrawlgateOptions;
  warnings: string[];
  /** Pays a 402 body through the API's verify_url, as an agent does; returns the access token. */
  payThroughApi(offer: GateOfferBody & { verify_url: string }): Promise<string>;
  /** The X-PAYMENT header value an x402 v1 client would send for this offer. */
  xPayment(offer: GateOfferBody, wallet?: ReturnType<typeof newWallet>): Promise<string>;
  /** Gates offered to this site so far (the daily counts the API keeps). */
  gateCount(): Promise<number>;
  /** Replaces the site's pricing (PUT /v1/sites/{id}/pricing). */
  setPricing(pricing: { default_price_usd: string; rules: { path: string; price_usd: string }[] }): Promise<void>;
  close(): Promise<void>;
}

export interface GatedSiteOptions {
  /** Default: isolated on the worker's chain. */
  app?: TestAppOptions;
  /** Gives the agent 1 USDC; default the API's dev faucet (which only the `local` network has). */
  fundAgent?: (app: TestApp, address: `0x${string}`) => Promise<void>;
}

export async function startGatedSite({
  app: appOptions = { isolateChain: true },
  fundAgent = (app, address) => fundUsdc(app, address, '1'),
}: GatedSiteOptions = {}): Promise<GatedSite> {
  const app = await startTestApp(appOptions);
  const payee = newWallet();
  const payTo = payee.address;
  const { site, publisher } = await pricedSite(app, payee);
  const agent = newWallet();
  await fundAgent(app, agent.address);
  const warnings: string[] = [];
  const crawlerIps = await crawlerRanges('loopback.json');

  return {
    app,
    site,
    publisher,
    payTo,
    payee,
    agent,
    warnings,
    options: (overrides = {}) => ({
      apiUrl: app.baseUrl,
      siteId: site.siteId,
      siteToken: site.siteToken,
      secret: site.secret,
      logger: { warn: (message: string) => warnings.push(message) },
      crawlerIps,
      ...overrides,
    }),
    async payThroughApi(offer) {
      const response = await fetch(offer.verify_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payment: await signPayment(app, agent, offer) }),
      });
      const body = (await response.json()) as { access_token: string };
      if (response.status !== 200) throw new Error(`verify failed: ${response.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async xPayment(offer, wallet = agent) {
      return encodeBase64Json(await signPayment(app, wallet, offer));
    },
    async setPricing(pricing) {
      const response = await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
        body: pricing,
        headers: publisher.auth,
      });
      if (response.status !== 200)
        throw new Error(`pricing failed: ${response.status} ${JSON.stringify(response.body)}`);
    },
    async gateCount() {
      const rows = await app.database.prisma.siteDailyCount.findMany({ where: { siteId: site.siteId } });
      return rows.reduce((sum, row) => sum + row.gatesCreated, 0);
    },
    close: () => app.close(),
  };
}
