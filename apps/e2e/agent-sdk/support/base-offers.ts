import { NETWORKS, type PaymentRequirementsV1 } from '@crawlgate/core';

/** Base's USDC, which agents on `base` pay with. */
export const BASE_USDC = NETWORKS.base.usdc.address!;

/** An x402 v1 "exact" requirement of 0.001 USD in Base USDC to `payTo`, as a crafted 402 names it. */
export const baseV1Offer = (
  payTo: `0x${string}`,
  overrides: Partial<PaymentRequirementsV1> = {},
): PaymentRequirementsV1 => ({
  scheme: 'exact',
  network: 'base',
  maxAmountRequired: '1000',
  resource: 'http://site/page',
  description: 'a page',
  mimeType: 'text/html',
  payTo,
  maxTimeoutSeconds: 60,
  asset: BASE_USDC,
  extra: { name: NETWORKS.base.usdc.name, version: NETWORKS.base.usdc.version },
  ...overrides,
});
