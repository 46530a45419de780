import { randomUUID } from 'node:crypto';
import { payoutProofMessage, signGate } from '@crawlgate/core';
import type { PrivateKeyAccount } from 'viem';
import type { TestApp } from './test-app';

export interface TestPublisher {
  publisherId: string;
  email: string;
  password: string;
  apiKey: string;
  auth: { authorization: string };
}

export interface TestSite {
  siteId: string;
  domain: string;
  siteToken: string;
  secret: string;
  kid: string;
}

/** A client address of its own per call, so fixtures never share the per-IP register limit. */
export const freshIp = () => `10.${rand255()}.${rand255()}.${rand255()}`;
const rand255 = () => Math.floor(Math.random() * 255);

export async function registerPublisher(
  app: Pick<TestApp, 'call'>,
  overrides: { email?: string; password?: string; name?: string; ip?: string } = {},
): Promise<TestPublisher> {
  const email = overrides.email ?? `p-${randomUUID()}@example.com`;
  const password = overrides.password ?? 'correct horse battery';
  const response = await app.call('POST', '/v1/publishers/register', {
    body: { email, password, name: overrides.name ?? 'Test Publisher' },
    headers: { 'x-forwarded-for': overrides.ip ?? freshIp() },
  });
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
  const apiKey = response.body.api_key as string;
  return {
    publisherId: response.body.publisher_id,
    email,
    password,
    apiKey,
    auth: { authorization: `Bearer ${apiKey}` },
  };
}

export async function createSite(
  app: Pick<TestApp, 'call'>,
  publisher: TestPublisher,
  domain = `${randomUUID().slice(0, 8)}.example.com`,
): Promise<TestSite> {
  const response = await app.call('POST', '/v1/sites', { body: { domain }, headers: publisher.auth });
  if (response.status !== 201)
    throw new Error(`create site failed: ${response.status} ${JSON.stringify(response.body)}`);
  return {
    siteId: response.body.site_id,
    domain,
    siteToken: response.body.site_token,
    secret: response.body.access_token_secret,
    kid: response.body.kid,
  };
}

/**
 * A payout address, or the account that holds it: an account signs a proof, so several publishers
 * of one test may name its address (without one, an address already named is refused).
 */
export type TestPayee = `0x${string}` | PrivateKeyAccount;

/** Makes `payTo` the publisher's payout address, with a proof when given the account. */
export async function namePayoutAddress(
  app: Pick<TestApp, 'call'>,
  publisher: TestPublisher,
  payTo: TestPayee,
): Promise<void> {
  const payout = await app.call('PATCH', '/v1/publishers/me', {
    body:
      typeof payTo === 'string'
        ? { payout_address: payTo }
        : {
            payout_address: payTo.address,
            payout_proof: await payTo.signMessage({
              message: payoutProofMessage(payTo.address, publisher.publisherId),
            }),
          },
    headers: { ...publisher.auth, 'x-confirm-password': publisher.password },
  });
  if (payout.status !== 200) throw new Error(`payout failed: ${JSON.stringify(payout.body)}`);
}

/** A fresh publisher paid at `payTo`, with one site priced: default 0.01, /free/* free, /cheap/* 0.001. */
export async function pricedSite(
  app: Pick<TestApp, 'call'>,
  payTo: TestPayee,
): Promise<{ publisher: TestPublisher; site: TestSite }> {
  const publisher = await registerPublisher(app);
  await namePayoutAddress(app, publisher, payTo);
  return { publisher, site: await pricedSiteOf(app, publisher) };
}

/** A fresh publisher paid at `payTo`, with one site whose every page costs `priceUsd`. */
export async function siteAtPrice(app: Pick<TestApp, 'call'>, payTo: TestPayee, priceUsd: string): Promise<TestSite> {
  const publisher = await registerPublisher(app);
  await namePayoutAddress(app, publisher, payTo);
  const site = await createSite(app, publisher);
  const pricing = await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
    body: { default_price_usd: priceUsd },
    headers: publisher.auth,
  });
  if (pricing.status !== 200) throw new Error(`pricing failed: ${JSON.stringify(pricing.body)}`);
  return site;
}

/** Another site of `publisher`, priced as pricedSite's. */
export async function pricedSiteOf(app: Pick<TestApp, 'call'>, publisher: TestPublisher): Promise<TestSite> {
  const site = await createSite(app, publisher);
  const pricing = await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
    body: {
      default_price_usd: '0.01',
      rules: [
        { path: '/free/*', price_usd: '0' },
        { path: '/cheap/*', price_usd: '0.001' },
      ],
    },
    headers: publisher.auth,
  });
  if (pricing.status !== 200) throw new Error(`pricing failed: ${JSON.stringify(pricing.body)}`);
  return site;
}

/** A priced site (pricedSite) that takes x402 batch-settlement vouchers. */
export async function batchSettlementSite(
  app: Pick<TestApp, 'call'>,
  payTo: TestPayee,
): Promise<{ publisher: TestPublisher; site: TestSite }> {
  const priced = await pricedSite(app, payTo);
  const on = await app.call('PATCH', `/v1/sites/${priced.site.siteId}`, {
    body: { batch_settlement: true },
    headers: priced.publisher.auth,
  });
  if (on.status !== 200) throw new Error(`batch settlement not turned on: ${JSON.stringify(on.body)}`);
  return priced;
}

export async function openGate(app: Pick<TestApp, 'call'>, site: TestSite, url: string) {
  const response = await app.call('POST', '/v1/gates', { body: { url }, headers: { 'x-site-token': site.siteToken } });
  if (response.status !== 402) throw new Error(`gate not opened: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/**
 * A gate of `path` as a middleware mints it from its site's terms (signed with the site's secret),
 * naming `payTo`: one it kept minting before it reloaded them, say. Its terms too (`ref`). `ref`:
 * another gate's, to forge one; `ttlSeconds`: its life (900).
 */
export function middlewareGate(
  app: Pick<TestApp, 'chain'>,
  site: TestSite,
  payTo: `0x${string}`,
  path: string,
  { ref = randomUUID(), ttlSeconds = 900 }: { ref?: string; ttlSeconds?: number } = {},
) {
  const now = Math.floor(Date.now() / 1000);
  const terms = {
    siteId: site.siteId,
    ref,
    path,
    micros: 10_000n,
    chainId: app.chain.chainId,
    asset: app.chain.usdc,
    payTo,
    iat: now,
    exp: now + ttlSeconds,
  };
  return { id: signGate(terms, site.secret), terms };
}
