import { encodeBase64Json } from '@crawlgate/core';
import { networkAllows, offersOf402 } from './quoted-offers';

const ASSET = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'; // USDC on Base Sepolia
const PAY_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

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
        },
      ],
    };
    const v1 = {
      x402Version: 1,
      accepts: [{ scheme: 'exact', network: 'base-sepolia', maxAmountRequired: '10000', asset: ASSET, payTo: PAY_TO }],
    };
    const response = new Response(JSON.stringify(v1), {
      status: 402,
      headers: { 'payment-required': encodeBase64Json(v2) },
    });
    expect(await offersOf402(response)).toEqual([
      { x402_version: 2, network: 'eip155:84532', asset: ASSET, pay_to: PAY_TO, amount: '10000', price_usd: '0.01' },
      { x402_version: 1, network: 'base-sepolia', asset: ASSET, pay_to: PAY_TO, amount: '10000', price_usd: '0.01' },
    ]);
  });

  it('skips what it cannot read: other schemes, odd amounts, missing fields, a body that is not JSON', async () => {
    const accepts = [
      { scheme: 'upto', network: 'base', maxAmountRequired: '1', asset: ASSET, payTo: PAY_TO },
      { scheme: 'exact', network: 'base', maxAmountRequired: '-1', asset: ASSET, payTo: PAY_TO },
      { scheme: 'exact', network: 'base', maxAmountRequired: 1000, asset: ASSET, payTo: PAY_TO },
      { scheme: 'exact', network: 'base', maxAmountRequired: '1000', asset: ASSET },
      null,
      'exact',
    ];
    expect(await offersOf402(new Response(JSON.stringify({ accepts }), { status: 402 }))).toEqual([]);
    expect(
      await offersOf402(
        new Response('Payment required', { status: 402, headers: { 'payment-required': 'not base64 json' } }),
      ),
    ).toEqual([]);
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
