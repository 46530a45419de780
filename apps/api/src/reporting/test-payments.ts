import { randomBytes, randomUUID } from 'node:crypto';
import { getAddress } from 'viem';
import type { TestPublisher, TestSite } from '../../test/fixtures';
import type { TestApp } from '../../test/test-app';
import type { Payment, PaymentStatus } from '../generated/prisma/client';

/*
 * Test data for the read-only reporting endpoints: rows written straight to the tables, so these
 * tests do not depend on the chain or on the payment flow, which have their own tests.
 */

export interface PaymentFixture {
  payer: string;
  /** Micro-USD, which is USDC's atomic unit. */
  amount: bigint;
  url?: string;
  confirmedAt?: Date;
  status?: PaymentStatus;
}

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

/** A fresh wallet address, EIP-55 checksummed as clients send it. */
export const newAddress = (): string => getAddress(hex(20));

/** A payment of `site` by `payer`; confirmed (now, unless given) unless another status is given. */
export async function insertPayment(
  app: TestApp,
  owner: TestPublisher,
  site: TestSite,
  fixture: PaymentFixture,
): Promise<Payment> {
  const status = fixture.status ?? 'confirmed';
  const confirmedAt = status === 'confirmed' ? (fixture.confirmedAt ?? new Date()) : null;
  return app.database.prisma.payment.create({
    data: {
      gateId: randomUUID(),
      siteId: site.siteId,
      publisherId: owner.publisherId,
      url: fixture.url ?? '/articles/1',
      method: 'transfer',
      status,
      chainId: app.chain.chainId,
      asset: app.chain.usdc.toLowerCase(),
      payer: fixture.payer.toLowerCase(),
      payTo: hex(20),
      amount: fixture.amount,
      txHash: hex(32),
      createdAt: confirmedAt ?? new Date(),
      confirmedAt,
    },
  });
}

/** Records `count` more gates created on `day` (YYYY-MM-DD), as the gates service counts them. */
export async function addGatesCreated(app: TestApp, site: TestSite, day: string, count: number): Promise<void> {
  const key = { siteId: site.siteId, day: new Date(`${day}T00:00:00Z`) };
  await app.database.prisma.siteDailyCount.upsert({
    where: { siteId_day: key },
    create: { ...key, gatesCreated: count },
    update: { gatesCreated: { increment: count } },
  });
}

/** Follows next_cursor from the newest page to the last: each page's size, and every payment id in order. */
export async function walkPages(
  app: TestApp,
  path: string,
  headers: Record<string, string>,
  limit: number,
): Promise<{ sizes: number[]; ids: string[] }> {
  const sizes: number[] = [];
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const response = await app.call('GET', `${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    if (response.status !== 200) throw new Error(`page failed: ${response.status} ${JSON.stringify(response.body)}`);
    sizes.push(response.body.items.length);
    ids.push(...response.body.items.map((item: { payment_id: string }) => item.payment_id));
    cursor = response.body.next_cursor;
  } while (cursor && sizes.length < 20);
  return { sizes, ids };
}
