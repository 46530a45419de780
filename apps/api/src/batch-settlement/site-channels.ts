import { formatMicrosUsd, type SiteChannelsView } from '@crawlgate/core';
import { checksummed } from '../reporting/payment-items';

/** Channels listed in a site's view, most recent voucher first. */
const MAX_LISTED_CHANNELS = 100;

/** One channel's voucher payments for a site (ChannelStore.siteChannels), amounts as decimal strings. */
export interface SiteChannelRow {
  channel_id: string;
  payer: string;
  claimed: string;
  unclaimed: string;
  last_voucher_at: Date;
}

/** The view of a site's channels, most recent voucher first as the rows come. */
export function siteChannelsView(siteId: string, rows: readonly SiteChannelRow[]): SiteChannelsView {
  let claimed = 0n;
  let unclaimed = 0n;
  for (const row of rows) {
    claimed += BigInt(row.claimed);
    unclaimed += BigInt(row.unclaimed);
  }
  return {
    site_id: siteId,
    claimed_amount: claimed.toString(),
    claimed_usd: formatMicrosUsd(claimed),
    unclaimed_amount: unclaimed.toString(),
    unclaimed_usd: formatMicrosUsd(unclaimed),
    channels: rows.slice(0, MAX_LISTED_CHANNELS).map((row) => ({
      channel_id: row.channel_id.trim(),
      payer: checksummed(row.payer.trim()),
      claimed_amount: row.claimed,
      unclaimed_amount: row.unclaimed,
      last_voucher_at: new Date(row.last_voucher_at).toISOString(),
    })),
  };
}
