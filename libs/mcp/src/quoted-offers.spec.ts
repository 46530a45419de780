import { encodeBase64Json, NETWORKS } from '@crawlgate/core';
import { allowList } from '@crawlgate/agent';
import { networkAllows, offersOf402 } from './quoted-offers';

const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'; // USDC on Base Sepolia
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const OTHER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
/** The token's EIP-712 domain, as the agent's allow-list expects it for Base Sepolia USDC. */
const DOMAIN = { name: NETWORKS['base-sepolia'].usdc.name, version: NETWORKS['base-sepolia'].usdc.version };
const ALLOWED = allowList(['base-sepolia']);

describe('offersOf402', () => {
  it('reads the v2 header first, then the v1 body', async () => {
    const v2 = {
      x402Version: 2,
      resource: { url: 'https://a.example/x' },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:84532',
          amount: '10000',
          asset: ASSET,
          payTo: PAY_TO,
          maxTimeoutSeconds: 60,
          extra: DOMAIN,
        },
      ],
    };
    const v1 = {
      x402Version: 1,
      accepts: [
        {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: '10000',
          asset: ASSET,
          payTo: PAY_TO,
          extra: DOMAIN,
        },
      ],
    };
    const response = new Response(JSON.stringify(v1), {
      status: 402,
      headers: { 'payment-required': encodeBase64Json(v2) },
    });
    const first = {
      x402_version: 2,
      network: 'eip155:84532',
      asset: ASSET,
      pay_to: PAY_TO,
      amount: '10000',
      price_usd: '0.01',
    };
    expect(await offersOf402(response, ALLOWED)).toEqual({
      offers: [
        first,
        { x402_version: 1, network: 'base-sepolia', asset: ASSET, pay_to: PAY_TO, amount: '10000', price_usd: '0.01' },
      ],
      payable: first,
    });
  });

  it('reads and chooses as the agent pays: an offer without the token domain is no offer, one in another domain is not paid', async () => {
    const offer = (payTo: string, amount: string, extra?: unknown) => ({
      scheme: 'exact',
      network: 'base-sepolia',
      maxAmountRequired: amount,
      asset: ASSET,
      payTo,
      ...(extra ? { extra } : {}),
    });
    const accepts = [
      offer(OTHER, '1'),
      offer(OTHER, '2', { name: 'Fake', version: '9' }),
      offer(PAY_TO, '3000', DOMAIN),
    ];
    const { offers, payable } = await offersOf402(new Response(JSON.stringify({ accepts }), { status: 402 }), ALLOWED);
    expect(offers.map((o) => o.amount)).toEqual(['2', '3000']);
    expect(payable).toMatchObject({ pay_to: PAY_TO, amount: '3000', price_usd: '0.003' });
  });

  it('skips what it cannot read: other schemes, odd amounts, missing fields, a body that is not JSON', async () => {
    const accepts = [
      { scheme: 'upto', network: 'base', maxAmountRequired: '1', asset: ASSET, payTo: PAY_TO },
      { scheme: 'exact', network: 'base', maxAmountRequired: '-1', asset: ASSET, payTo: PAY_TO },
      { scheme: 'exact', network: 'base', maxAmountRequired: 1000, asset: ASSET, payTo: PAY_TO },
      { scheme: 'exact', network: 'base', maxAmountRequired: '1000', asset: ASSET, extra: DOMAIN },
      { scheme: 'exact', network: 'base', maxAmountRequired: '1000', asset: 'USDC', payTo: PAY_TO, extra: DOMAIN },
      { scheme: 'exact', network: 'solana', maxAmountRequired: '1000', asset: ASSET, payTo: PAY_TO, extra: DOMAIN },
      null,
      'exact',
    ];
    const none = { offers: [], payable: undefined };
    expect(await offersOf402(new Response(JSON.stringify({ accepts }), { status: 402 }), ALLOWED)).toEqual(none);
    expect(
      await offersOf402(
        new Response('Payment required', { status: 402, headers: { 'payment-required': 'not base64 json' } }),
        ALLOWED,
      ),
    ).toEqual(none);
  });
});

describe('networkAllows', () => {
  it('matches registry networks by their USDC, whichever way the site names the chain', () => {
    expect(networkAllows(['base-sepolia'], { network: 'eip155:84532', asset: ASSET.toLowerCase() })).toBe(true);
    expect(networkAllows(['base-sepolia'], { network: 'base-sepolia', asset: ASSET })).toBe(true);
    expect(networkAllows(['base'], { network: 'base-sepolia', asset: ASSET })).toBe(false);
    expect(networkAllows(['base-sepolia'], { network: 'base-sepolia', asset: PAY_TO })).toBe(false);
  });

  it('matches an allowed asset on its chain', () => {
    const local = { network: 'local' as const, asset: PAY_TO as `0x${string}` };
    expect(networkAllows([local], { network: 'eip155:31337', asset: PAY_TO })).toBe(true);
    expect(networkAllows([local], { network: 'local', asset: ASSET })).toBe(false);
    expect(networkAllows([local], { network: 'solana', asset: PAY_TO })).toBe(false);
  });
});
