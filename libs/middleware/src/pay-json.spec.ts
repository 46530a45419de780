import type { SiteOffer } from '@crawlgate/core';
import { ALWAYS_FREE_PATHS } from './bots/free-paths';
import { buildPayJson } from './pay-json';

const SITE: SiteOffer = {
  site_id: '7d1e3f8a-4b2c-4c1d-9e0f-123456789abc',
  domain: 'news.example',
  default_price_usd: '0.002',
  rules: [
    { path: '/premium/*', price_usd: '0.01' },
    { path: '/free/*', price_usd: '0' },
  ],
  pricing_version: 4,
  network: 'base-sepolia',
  caip2: 'eip155:84532',
  chain_id: 84532,
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  x402_network: 'base-sepolia',
  asset_name: 'USDC',
  asset_version: '2',
  pay_to: '0x1111111111111111111111111111111111111111',
  gate_ttl_seconds: 900,
  settlement_timeout_seconds: 30,
  max_url_length: 2048,
  api_base_url: 'https://api.crawlgate.test',
};

describe('buildPayJson', () => {
  it('publishes version 1 of the document, field for field', () => {
    expect(buildPayJson({ ...SITE, api_base_url: 'https://api.crawlgate.example/' })).toEqual({
      version: 1,
      site: { id: SITE.site_id, domain: 'news.example' },
      currency: 'USD',
      default_price_usd: '0.002',
      rules: [
        { path: '/premium/*', price_usd: '0.01' },
        { path: '/free/*', price_usd: '0' },
      ],
      pricing_version: 4,
      payment: {
        protocols: ['x402'],
        x402Version: [1, 2],
        scheme: 'exact',
        network: 'base-sepolia',
        caip2: 'eip155:84532',
        chain_id: 84532,
        asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
        asset_symbol: 'USDC',
        asset_decimals: 6,
        pay_to: '0x1111111111111111111111111111111111111111',
      },
      gate: {
        how_to: expect.stringContaining('X-PAYMENT'),
        payment_headers: ['X-PAYMENT', 'PAYMENT-SIGNATURE'],
        token_headers: ['Authorization: Bearer', 'X-Crawlgate-Token'],
        token_ttl_seconds: 1800,
      },
      api: 'https://api.crawlgate.example',
      free_paths: [...ALWAYS_FREE_PATHS],
    });
  });

  it('names the API by its public base URL, never the address the gate calls it at (internal, maybe with credentials)', () => {
    expect(buildPayJson(SITE).api).toBe('https://api.crawlgate.test');
  });

  it('explains the whole gate in how_to', () => {
    const { how_to } = buildPayJson(SITE).gate;
    for (const word of [
      '402',
      'PAYMENT-REQUIRED',
      'crawler-price',
      'X-PAYMENT',
      'PAYMENT-SIGNATURE',
      'verify_url',
      'tx_hash',
      'transfer proof',
      'X-Crawlgate-Token',
      'Authorization: Bearer',
    ]) {
      expect(how_to).toContain(word);
    }
  });

  it('lists the license document among the free paths, wherever the site serves it (helper-443)', () => {
    expect(buildPayJson(SITE, '/license.xml').free_paths).toEqual([...ALWAYS_FREE_PATHS, '/license.xml']);
    expect(buildPayJson(SITE, '/legal/rsl.xml').free_paths).toContain('/legal/rsl.xml');
    expect(buildPayJson(SITE, undefined).free_paths).toEqual([...ALWAYS_FREE_PATHS]);
  });

  it('tells an x402 v1 client whose paid answer was lost to post the same payment to verify_url, not to resend it (helper-438)', () => {
    expect(buildPayJson(SITE).gate.how_to).toMatch(/answer .*lost.*verify_url/i);
  });

  it("states how long a paid token opens its path as the site's API issues them, the default for an API that does not say", () => {
    expect(buildPayJson({ ...SITE, access_token_ttl_seconds: 60 }).gate.token_ttl_seconds).toBe(60);
    expect(buildPayJson(SITE).gate.token_ttl_seconds).toBe(1800);
  });

  it('keeps pay_to null for a site that cannot be paid yet', () => {
    expect(buildPayJson({ ...SITE, pay_to: null }).payment.pay_to).toBeNull();
  });

  it('copies what it publishes, so later changes to the offer do not leak into a served document', () => {
    const offer = { ...SITE, rules: SITE.rules.map((rule) => ({ ...rule })) };
    const doc = buildPayJson(offer);
    offer.rules[0].price_usd = '0.5';
    expect(doc.rules[0].price_usd).toBe('0.01');
    expect(JSON.parse(JSON.stringify(doc))).toEqual(doc);
  });

  it('publishes only the fields it documents, even when the offer has more', () => {
    const doc = buildPayJson({ ...SITE, secret: 'x' } as SiteOffer);
    expect(Object.keys(doc)).toEqual([
      'version',
      'site',
      'currency',
      'default_price_usd',
      'rules',
      'pricing_version',
      'payment',
      'gate',
      'api',
      'free_paths',
    ]);
    expect(JSON.stringify(doc)).not.toContain('secret');
  });
});
