import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freshIp } from '../../../apps/api/test/fixtures';
import type { FetchLike } from '../src/http';

/**
 * The global fetch, every request seeming to come from one fresh client address: register and
 * login are limited to 5 a minute per IP, and the test app trusts X-Forwarded-For.
 */
export function fetchFromFreshIp(): FetchLike {
  const ip = freshIp();
  return (input, init) => fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-forwarded-for': ip } });
}

export const newEmail = () => `sdk-${randomUUID()}@example.com`;
export const newDomain = () => `${randomUUID().slice(0, 8)}.example.com`;
export const PASSWORD = 'correct horse battery';

/** A loopback URL where nothing listens (a port just released): connections are refused. */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** What GET …/pricing answers after a PUT of these (normalised) prices. */
export function pricingView(siteId: string, defaultPrice: string, rules: [path: string, price: string][]) {
  return {
    site_id: siteId,
    default_price_usd: defaultPrice,
    rules: rules.map(([path, price_usd]) => ({ path, price_usd })),
    version: expect.any(Number),
    updated_at: expect.any(String),
  };
}
