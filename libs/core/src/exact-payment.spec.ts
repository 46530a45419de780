import { recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decodeBase64Json, encodeBase64Json } from './base64url';
import {
  AUTHORIZATION_CLOCK_SKEW_SECONDS,
  exactAuthorization,
  exactEvmPayload,
  exactPaymentV1,
  exactPaymentV2,
  transferWithAuthorizationTypedData,
  type TokenDomain,
  type TransferAuthorization,
} from './exact-payment';
import { NETWORKS } from './networks';
import { parsePaymentPayload, type PaymentRequirementsV2 } from './x402';

const account = privateKeyToAccount(generatePrivateKey());
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const usdc = NETWORKS['base-sepolia'].usdc;
const domain: TokenDomain = {
  name: usdc.name,
  version: usdc.version,
  chainId: NETWORKS['base-sepolia'].chainId,
  verifyingContract: usdc.address!,
};
const accepted: PaymentRequirementsV2 = {
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '10000',
  asset: usdc.address!,
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: usdc.name, version: usdc.version },
};

describe('exactAuthorization', () => {
  it('is valid from the clock skew before now until validForSeconds after, with a fresh random nonce', () => {
    const auth = exactAuthorization({
      from: account.address,
      to: PAY_TO,
      value: 10_000n,
      validForSeconds: 300,
      now: 1_740_000_000,
    });
    expect(auth).toEqual({
      from: account.address,
      to: PAY_TO,
      value: 10_000n,
      validAfter: 1_740_000_000n - BigInt(AUTHORIZATION_CLOCK_SKEW_SECONDS),
      validBefore: 1_740_000_300n,
      nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    const again = exactAuthorization({
      from: account.address,
      to: PAY_TO,
      value: 10_000n,
      validForSeconds: 300,
      now: 1_740_000_000,
    });
    expect(again.nonce).not.toBe(auth.nonce);
  });

  it('takes the wall clock when no time is given', () => {
    const before = BigInt(Math.floor(Date.now() / 1000));
    const auth = exactAuthorization({ from: account.address, to: PAY_TO, value: 1n, validForSeconds: 60 });
    expect(auth.validBefore - before).toBeGreaterThanOrEqual(60n);
    expect(auth.validBefore - before).toBeLessThanOrEqual(61n);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses a lifetime of %p seconds', (validForSeconds) => {
    expect(() => exactAuthorization({ from: account.address, to: PAY_TO, value: 1n, validForSeconds })).toThrow(
      RangeError,
    );
  });
});

describe('transferWithAuthorizationTypedData', () => {
  it('is what a viem account signs, and the signature recovers to the payer', async () => {
    const auth = exactAuthorization({ from: account.address, to: PAY_TO, value: 10_000n, validForSeconds: 60 });
    const typedData = transferWithAuthorizationTypedData(domain, auth);
    expect(typedData).toMatchObject({ domain, primaryType: 'TransferWithAuthorization', message: auth });
    const signature = await account.signTypedData(typedData);
    expect(await recoverTypedDataAddress({ ...typedData, signature })).toBe(account.address);
    // A different amount is a different message: the signature no longer recovers to the payer.
    const other = transferWithAuthorizationTypedData(domain, { ...auth, value: 10_001n });
    expect(await recoverTypedDataAddress({ ...other, signature })).not.toBe(account.address);
  });
});

describe('wire payloads', () => {
  const auth: TransferAuthorization = {
    from: account.address,
    to: PAY_TO,
    value: 10_000n,
    validAfter: 1n,
    validBefore: (1n << 256n) - 1n,
    nonce: `0x${'ab'.repeat(32)}`,
  };
  const signature = `0x${'cd'.repeat(65)}` as const;

  it('write the authorization’s numbers as decimal strings', () => {
    expect(exactEvmPayload(auth, signature)).toEqual({
      signature,
      authorization: {
        from: account.address,
        to: PAY_TO,
        value: '10000',
        validAfter: '1',
        validBefore: ((1n << 256n) - 1n).toString(),
        nonce: auth.nonce,
      },
    });
  });

  it('v1: read back by the API’s parser as written, through the base64 header', () => {
    const payment = exactPaymentV1('base-sepolia', auth, signature);
    expect(payment).toEqual({
      x402Version: 1,
      scheme: 'exact',
      network: 'base-sepolia',
      payload: exactEvmPayload(auth, signature),
    });
    expect(parsePaymentPayload(decodeBase64Json(encodeBase64Json(payment)))).toEqual({
      ok: true,
      version: 1,
      scheme: 'exact',
      network: 'base-sepolia',
      payload: payment.payload,
    });
  });

  it('v2: echoes the requirement it pays; resource and extensions only when given', () => {
    const bare = exactPaymentV2(accepted, auth, signature);
    expect(bare).toEqual({ x402Version: 2, accepted, payload: exactEvmPayload(auth, signature) });
    expect(Object.keys(bare)).toEqual(['x402Version', 'accepted', 'payload']);
    expect(parsePaymentPayload(decodeBase64Json(encodeBase64Json(bare)))).toEqual({
      ok: true,
      version: 2,
      scheme: 'exact',
      network: 'eip155:84532',
      payload: bare.payload,
      accepted,
    });

    const full = exactPaymentV2(accepted, auth, signature, {
      resource: { url: 'https://example.com/a' },
      extensions: { 'payment-identifier': { info: { id: 'pay_x' } } },
    });
    expect(full).toMatchObject({
      resource: { url: 'https://example.com/a' },
      extensions: { 'payment-identifier': { info: { id: 'pay_x' } } },
    });
  });
});
