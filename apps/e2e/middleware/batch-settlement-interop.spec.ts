/*
 * The unmodified x402 v2 client with its batch-settlement scheme (@x402/fetch + @x402/evm's
 * BatchSettlementEvmScheme) paying pages of a site gated by our middleware (Express), through the
 * real API on the local chain: one deposit, then one voucher per page; every page arrives; the
 * claimer then moves exactly the sum of the prices to the publisher. And the client's cooperative
 * refund: the rest of the deposit back at once, the publisher paid first, no page served for it.
 */

import { decodeBase64Json } from '@crawlgate/core';
import { parseAbiItem } from 'viem';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ClaimerService } from '../../../apps/api/src/batch-settlement/claimer.service';
import { fundUsdc, newWallet, usdcBalance } from '../../../apps/api/test/test-agent';
import { GPTBOT, type GatedSite } from './support/gated-site';
import { page, type SiteServer } from './support/site-servers';
import { startVoucherSite } from './support/voucher-site';

const PAGES = 100;
const DEPOSITED = parseAbiItem(
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
);
const PRICE = 10_000n; // the site's default, 0.01 USD

let site: GatedSite;
let server: SiteServer;

let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ site, server, close } = await startVoucherSite());
});
afterAll(() => close?.());

const asGptBot: typeof fetch = (input, init) => {
  const request = new Request(input, init);
  request.headers.set('user-agent', GPTBOT);
  return fetch(request);
};

function batchClient(depositMultiplier: number) {
  const client = new x402Client();
  const signer = toClientEvmSigner(site.agent, site.app.chain.publicClient as never);
  client.register('eip155:31337', new BatchSettlementEvmScheme(signer, { depositPolicy: { depositMultiplier } }));
  // Our test token is not a USDC the client knows: allow it, with a per-payment cap of one page.
  client.setSpendControls({
    allowedAssets: [{ network: 'eip155:31337', asset: site.app.chain.usdc, maxAmountPerPayment: PRICE.toString() }],
  });
  return client;
}

it(`is paid for ${PAGES} pages with one deposit, every page arrives, and the claim pays the publisher exactly`, async () => {
  const first = await asGptBot(`${server.url}/articles/probe`);
  expect(first.status).toBe(402);
  const offered = decodeBase64Json(first.headers.get('payment-required')!) as { accepts: { scheme: string }[] };
  expect(offered.accepts.map((a) => a.scheme)).toEqual(['exact', 'batch-settlement']);

  const pay = wrapFetchWithPayment(asGptBot, batchClient(PAGES));
  const before = await usdcBalance(site.app, site.agent.address);
  for (let i = 1; i <= PAGES; i++) {
    const response = await pay(`${server.url}/articles/${i}`);
    expect({ page: i, status: response.status }).toEqual({ page: i, status: 200 });
    expect(await response.text()).toBe(page(String(i)));
    const settlement = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    expect(settlement).toMatchObject({
      success: true,
      network: 'eip155:31337',
      extra: {
        chargedAmount: PRICE.toString(),
        channelState: { chargedCumulativeAmount: (BigInt(i) * PRICE).toString() },
      },
    });
  }

  const escrow = site.app.chain.batchSettlement!.escrow;
  const deposits = await site.app.chain.publicClient.getLogs({ address: escrow, event: DEPOSITED, fromBlock: 0n });
  const ours = await site.app.database.prisma.payment.findMany({
    where: { siteId: site.site.siteId, method: 'voucher' },
  });
  expect(ours).toHaveLength(PAGES);
  const channelId = ours[0].channelId as `0x${string}`;
  expect(deposits.filter((log) => log.args.channelId === channelId)).toHaveLength(1);
  expect(await usdcBalance(site.app, site.agent.address)).toBe(before - BigInt(PAGES) * PRICE);

  // The publisher is paid only when the claimer runs, and then exactly.
  expect(await usdcBalance(site.app, site.payTo)).toBe(0n);
  const run = await site.app.app.get(ClaimerService).runOnce({ force: true });
  expect(run.claims).toHaveLength(1);
  expect(await usdcBalance(site.app, site.payTo)).toBe(BigInt(PAGES) * PRICE);
});

describe('a payer whose running total is behind the API’s', () => {
  it('gets x402’s corrective 402, checks its own voucher in it, and pays the page at the right total', async () => {
    const payer = newWallet();
    await fundUsdc(site.app, payer.address, '1');
    const signer = toClientEvmSigner(payer, site.app.chain.publicClient as never);
    const clientFor = () => {
      const client = new x402Client();
      client.register(
        'eip155:31337',
        new BatchSettlementEvmScheme(signer, { depositPolicy: { depositMultiplier: 10 } }),
      );
      client.setSpendControls({
        allowedAssets: [{ network: 'eip155:31337', asset: site.app.chain.usdc, maxAmountPerPayment: PRICE.toString() }],
      });
      return wrapFetchWithPayment(asGptBot, client);
    };
    const first = clientFor();
    for (const id of ['c1', 'c2', 'c3']) expect((await first(`${server.url}/articles/${id}`)).status).toBe(200);

    // A second client with no memory of the channel starts from the chain (nothing claimed yet) and signs too low.
    const seen: number[] = [];
    const watching: typeof fetch = async (input, init) => {
      const response = await asGptBot(input, init);
      seen.push(response.status);
      return response;
    };
    const client = new x402Client();
    client.register('eip155:31337', new BatchSettlementEvmScheme(signer, { depositPolicy: { depositMultiplier: 10 } }));
    client.setSpendControls({
      allowedAssets: [{ network: 'eip155:31337', asset: site.app.chain.usdc, maxAmountPerPayment: PRICE.toString() }],
    });
    const response = await wrapFetchWithPayment(watching, client)(`${server.url}/articles/c4`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(page('c4'));
    expect(seen).toEqual([402, 402, 200]); // the offer, the corrective 402, the page
    const rows = await site.app.database.prisma.payment.findMany({
      where: { payer: payer.address.toLowerCase(), method: 'voucher' },
      orderBy: { cumulativeAmount: 'asc' },
    });
    expect(rows.map((r) => r.cumulativeAmount)).toEqual([PRICE, 2n * PRICE, 3n * PRICE, 4n * PRICE]);
  });
});

describe('a voucher payment header taken elsewhere', () => {
  it('opens only the gate it paid: on another path it is 402 and the page is not served', async () => {
    const payer = newWallet();
    await fundUsdc(site.app, payer.address, '1');
    const sent: Headers[] = [];
    const recording: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      sent.push(request.headers);
      return asGptBot(request);
    };
    const client = new x402Client();
    client.register(
      'eip155:31337',
      new BatchSettlementEvmScheme(toClientEvmSigner(payer, site.app.chain.publicClient as never), {
        depositPolicy: { depositMultiplier: 10 },
      }),
    );
    client.setSpendControls({
      allowedAssets: [{ network: 'eip155:31337', asset: site.app.chain.usdc, maxAmountPerPayment: PRICE.toString() }],
    });
    const pay = wrapFetchWithPayment(recording, client);
    expect((await pay(`${server.url}/articles/x1`)).status).toBe(200);
    expect((await pay(`${server.url}/articles/x2`)).status).toBe(200);
    const header = sent
      .map((h) => h.get('payment-signature'))
      .filter(Boolean)
      .at(-1)!;

    const elsewhere = await asGptBot(`${server.url}/articles/x3`, { headers: { 'payment-signature': header } });
    expect(elsewhere.status).toBe(402);
    expect(await elsewhere.text()).not.toContain('Article');
    // The same header on its own path answers that gate again (the same payment, no second charge).
    const again = await asGptBot(`${server.url}/articles/x2`, { headers: { 'payment-signature': header } });
    expect(again.status).toBe(200);
    const rows = await site.app.database.prisma.payment.count({
      where: { payer: payer.address.toLowerCase(), method: 'voucher' },
    });
    expect(rows).toBe(2);
  });
});

describe('x402’s cooperative refund (BatchSettlementEvmScheme.refund)', () => {
  it('returns the rest of the deposit at once, pays the publisher what was charged first, and serves no page for it', async () => {
    const payer = newWallet();
    await fundUsdc(site.app, payer.address, '1');
    const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(payer, site.app.chain.publicClient as never), {
      depositPolicy: { depositMultiplier: 10 },
    });
    const client = new x402Client();
    client.register('eip155:31337', scheme);
    client.setSpendControls({
      allowedAssets: [{ network: 'eip155:31337', asset: site.app.chain.usdc, maxAmountPerPayment: PRICE.toString() }],
    });
    const pay = wrapFetchWithPayment(asGptBot, client);
    for (const id of ['r1', 'r2', 'r3']) expect((await pay(`${server.url}/articles/${id}`)).status).toBe(200);
    expect(await usdcBalance(site.app, payer.address)).toBe(1_000_000n - 10n * PRICE); // the deposit
    const publisherBefore = await usdcBalance(site.app, site.payTo);

    const answers: { status: number; body: string }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await asGptBot(input, init);
      answers.push({ status: response.status, body: await response.clone().text() });
      return response;
    };
    const settlement = await scheme.refund(`${server.url}/articles/r1`, { fetch: recording });
    expect(settlement).toMatchObject({ success: true, network: 'eip155:31337', amount: (7n * PRICE).toString() });
    // The probe's 402, then the refund's 200 carrying no page.
    expect(answers.map((a) => a.status)).toEqual([402, 200]);
    expect(answers[1].body).not.toContain('Article');
    expect(await usdcBalance(site.app, payer.address)).toBe(1_000_000n - 3n * PRICE);
    expect((await usdcBalance(site.app, site.payTo)) - publisherBefore).toBe(3n * PRICE);

    // The client goes on paying: a new deposit into the same channel, then vouchers.
    const after = await pay(`${server.url}/articles/r4`);
    expect(after.status).toBe(200);
    expect(await after.text()).toBe(page('r4'));
  });
});

describe('a client that pays only with exact', () => {
  it('still pays a site that also offers batch-settlement, with one on-chain transfer', async () => {
    const payer = newWallet();
    await fundUsdc(site.app, payer.address, '1');
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: payer });
    client.setSpendControls({
      allowedAssets: [{ network: 'eip155:31337', asset: site.app.chain.usdc, maxAmountPerPayment: PRICE.toString() }],
    });
    const response = await wrapFetchWithPayment(asGptBot, client)(`${server.url}/articles/exact`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(page('exact'));
    const row = await site.app.database.prisma.payment.findFirst({ where: { payer: payer.address.toLowerCase() } });
    expect(row).toMatchObject({ method: 'authorization', status: 'confirmed', url: '/articles/exact' });
    expect(await usdcBalance(site.app, payer.address)).toBe(1_000_000n - PRICE);
  });
});
