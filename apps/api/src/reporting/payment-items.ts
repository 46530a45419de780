import { caip2, formatMicrosUsd, NETWORK_NAMES, NETWORKS, type AgentPayment, type SitePayment } from '@crawlgate/core';
import { getAddress } from 'viem';
import type { Prisma } from '../generated/prisma/client';

/** The columns a history item shows; the stored authorization and token fields stay unread. */
export const PAYMENT_ITEM_COLUMNS = {
  id: true,
  gateId: true,
  siteId: true,
  url: true,
  amount: true,
  txHash: true,
  method: true,
  channelId: true,
  chainId: true,
  payer: true,
  confirmedAt: true,
} satisfies Prisma.PaymentSelect;

export type PaymentItemRow = Prisma.PaymentGetPayload<{ select: typeof PAYMENT_ITEM_COLUMNS }>;

/** A wallet's own history item: a site's payment item without the payer (the wallet asking). */
export function paymentItem(row: PaymentItemRow): AgentPayment {
  return {
    payment_id: row.id,
    gate_id: row.gateId,
    site_id: row.siteId,
    url: row.url,
    amount: row.amount.toString(),
    // USDC's atomic unit is one micro-USD, so the amount is the price.
    price_usd: formatMicrosUsd(row.amount),
    tx_hash: row.txHash,
    scheme: row.method === 'voucher' ? 'batch-settlement' : 'exact',
    channel_id: row.channelId,
    network: networkName(row.chainId),
    // Rows come from PAID queries, where confirmedAt is never null.
    paid_at: row.confirmedAt!.toISOString(),
  };
}

export function sitePaymentItem(row: PaymentItemRow): SitePayment {
  return { ...paymentItem(row), payer: checksummed(row.payer) };
}

/** Addresses are stored lower-case; shown in their EIP-55 form, as wallets and explorers show them. */
export function checksummed(address: string): string {
  return getAddress(address);
}

/** The registry's name for a chain this deployment knows, else its CAIP-2 id (payments outlive configuration). */
export function networkName(chainId: number): string {
  return NETWORK_NAMES.find((name) => NETWORKS[name].chainId === chainId) ?? caip2(chainId);
}
