import { parseAbiItem } from 'viem';
import { startGatedSite, type GatedSite } from './gated-site';
import { FRAMEWORKS, type SiteServer } from './site-servers';

/** A gated site with x402 batch-settlement switched on, served by the first framework (Express) with our middleware. */
export async function startVoucherSite(): Promise<{ site: GatedSite; server: SiteServer; close(): Promise<void> }> {
  const site = await startGatedSite();
  await switchOnBatchSettlement(site);
  const server = await FRAMEWORKS[0].start(site.options());
  return {
    site,
    server,
    close: async () => {
      await server.close();
      await site.close();
    },
  };
}

/** Has `site` offer x402 batch-settlement vouchers beside exact payments, as its publisher would. */
export async function switchOnBatchSettlement(site: GatedSite): Promise<void> {
  const on = await site.app.call('PATCH', `/v1/sites/${site.site.siteId}`, {
    body: { batch_settlement: true },
    headers: site.publisher.auth,
  });
  if (on.status !== 200) throw new Error(`batch_settlement could not be switched on: ${on.status}`);
}

const DEPOSITED = parseAbiItem(
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
);

/** The escrow's deposits into one channel of `site`'s chain, filtered by the node on the indexed channel id. */
export function depositsOf(site: GatedSite, channelId: `0x${string}`) {
  return site.app.chain.publicClient.getLogs({
    address: site.app.chain.batchSettlement!.escrow,
    event: DEPOSITED,
    args: { channelId },
    fromBlock: 0n,
  });
}
