/*
 * Unmodified x402 clients paying a site gated by our middleware: x402-fetch 1.2 (x402 v1,
 * X-PAYMENT) and @x402/fetch + @x402/evm 2.x (x402 v2, PAYMENT-SIGNATURE). v1 clients only know
 * named networks, so this runs its own anvil as chain 84532 with a test USDC whose EIP-712 domain
 * is Base Sepolia's ("USDC", "2"), and the API configured for base-sepolia on top of it.
 */

import { deployTestUsdc, mintTestUsdc, type AnvilInstance, startAnvil } from '@crawlgate/devchain';
import { decodePaymentResponseHeader, wrapFetchWithPayment as wrapFetchV2, x402Client } from '@x402/fetch';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSigner, decodeXPaymentResponse, wrapFetchWithPayment as wrapFetchV1 } from 'x402-fetch';
import { transfersTo } from '../../../apps/api/test/test-agent';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { FRAMEWORKS, page, type SiteServer } from './support/site-servers';

let anvil: AnvilInstance;
let usdc: `0x${string}`;
let site: GatedSite;
let server: SiteServer;
/** The v1 client takes a private key; the v2 client pays as the site's agent. */
const agentKey = generatePrivateKey();

beforeAll(async () => {
  anvil = await startAnvil({ chainId: 84532 });
  ({ usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl, chainId: 84532, name: 'USDC', version: '2' }));
  site = await startGatedSite({
    app: { config: { chain: { network: 'base-sepolia', usdcAddress: usdc } }, chainRpcUrl: anvil.rpcUrl },
    fundAgent: async (_app, address) =>
      void (await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: address, amount: 1_000_000n })),
  });
  await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: privateKeyToAccount(agentKey).address, amount: 1_000_000n });
  server = await FRAMEWORKS[0].start(site.options());
}, 60_000);
afterAll(async () => {
  await server?.close();
  await site?.close();
  await anvil?.stop();
}, 60_000);

/** What a crawler's fetch sends: its user agent. */
const asGptBot: typeof fetch = (input, init) => {
  const request = new Request(input, init);
  request.headers.set('user-agent', GPTBOT);
  return fetch(request);
};

it('is paid by the x402 v1 client (x402-fetch) with X-PAYMENT', async () => {
  // As x402-fetch's README does it. The signer's RPC is Base Sepolia's public one, never called: signing is local.
  const pay = wrapFetchV1(asGptBot, await createSigner('base-sepolia', agentKey));
  const response = await pay(`${server.url}/articles/v1`);
  expect(response.status).toBe(200);
  expect(await response.text()).toBe(page('v1'));
  const settlement = decodeXPaymentResponse(response.headers.get('x-payment-response')!);
  expect(settlement).toMatchObject({
    success: true,
    network: 'base-sepolia',
    payer: privateKeyToAccount(agentKey).address.toLowerCase(),
  });
  expect((await transfersTo(site.app, site.payTo)).map((t) => t.hash)).toContain(settlement.transaction);
});

it('is paid by the x402 v2 client (@x402/fetch + @x402/evm) with PAYMENT-SIGNATURE', async () => {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: site.agent });
  // The client's own safeguard: it pays only assets it knows (real Base Sepolia USDC) unless told
  // otherwise, and our stand-in token lives at another address. A cap of 0.10 USDC, as v1's default.
  client.setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: usdc, maxAmountPerPayment: '100000' }] });
  const pay = wrapFetchV2(asGptBot, client);
  const response = await pay(`${server.url}/articles/v2`);
  expect(response.status).toBe(200);
  expect(await response.text()).toBe(page('v2'));
  const settlement = decodePaymentResponseHeader(response.headers.get('payment-response')!);
  expect(settlement).toMatchObject({ success: true, network: 'eip155:84532' });
  expect((await transfersTo(site.app, site.payTo)).map((t) => t.hash)).toContain(settlement.transaction);
});
