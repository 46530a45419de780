import { hashTypedData, keccak256, toHex, verifyTypedData } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { decodeBase64Json, encodeBase64Json } from './base64url';
import { NETWORKS } from './networks';
import {
  parsePaymentPayload,
  type PaymentPayloadV1,
  type PaymentPayloadV2,
  type PaymentRequiredV1,
  type PaymentRequiredV2,
  type PaymentRequirementsV2,
  type SettleResponse,
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  X402_REASONS,
} from './x402';

const account = privateKeyToAccount(generatePrivateKey());
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const authorization = {
  from: account.address,
  to: PAY_TO,
  value: '10000',
  validAfter: '1740672089',
  validBefore: '1740672154',
  nonce: '0xf3746613c2d920b5fdabc0856f2aeb2d4f88ee6037b8cc5d04a71a4462f13480',
} as const;
const signature =
  '0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c';
const v1: PaymentPayloadV1 = {
  x402Version: 1,
  scheme: 'exact',
  network: 'base-sepolia',
  payload: { signature, authorization },
};
const accepted: PaymentRequirementsV2 = {
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '10000',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
};
const v2: PaymentPayloadV2 = {
  x402Version: 2,
  resource: { url: 'https://example.com/blog/a', description: 'Article', mimeType: 'text/html' },
  accepted,
  payload: { signature, authorization },
  extensions: {},
};

/** v1 with one field of the authorization replaced. */
const withAuth = (change: Record<string, unknown>) => ({
  ...v1,
  payload: { signature, authorization: { ...authorization, ...change } },
});
const failure = (input: unknown) => {
  const parsed = parsePaymentPayload(input);
  return parsed.ok ? 'ok' : parsed.msg;
};

describe('wire types', () => {
  it('describe the spec examples (compile-time check, then a JSON round trip)', () => {
    const required1: PaymentRequiredV1 = {
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      accepts: [
        {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: '10000',
          resource: 'https://example.com/blog/a',
          description: 'Article',
          mimeType: 'text/html',
          outputSchema: null,
          payTo: PAY_TO,
          maxTimeoutSeconds: 60,
          asset: accepted.asset,
          extra: { name: 'USDC', version: '2' },
        },
      ],
    };
    const required2: PaymentRequiredV2 = {
      x402Version: 2,
      error: 'PAYMENT-SIGNATURE header is required',
      resource: v2.resource!,
      accepts: [accepted],
    };
    const settled: SettleResponse = {
      success: true,
      transaction: '0x' + 'ab'.repeat(32),
      network: 'eip155:84532',
      payer: account.address,
    };
    for (const value of [required1, required2, settled, v1, v2])
      expect(decodeBase64Json(encodeBase64Json(value))).toEqual(value);
  });
});

describe('X402_REASONS', () => {
  it('holds the reason codes, each keyed by itself', () => {
    for (const [key, value] of Object.entries(X402_REASONS)) expect(key).toBe(value);
    expect(Object.values(X402_REASONS)).toEqual(
      expect.arrayContaining([
        'insufficient_funds',
        'invalid_exact_evm_payload_authorization_valid_after',
        'invalid_exact_evm_payload_authorization_valid_before',
        'invalid_exact_evm_payload_authorization_value',
        'invalid_exact_evm_payload_signature',
        'invalid_exact_evm_payload_recipient_mismatch',
        'invalid_network',
        'invalid_payload',
        'invalid_scheme',
        'payment_expired',
        'duplicate_settlement',
        'unexpected_settle_error',
        'invalid_exact_evm_nonce_already_used',
        'invalid_exact_evm_insufficient_balance',
        'invalid_exact_evm_token_name_mismatch',
      ]),
    );
    expect(Object.keys(X402_REASONS)).toHaveLength(15);
  });
});

describe('TRANSFER_WITH_AUTHORIZATION_TYPES', () => {
  it('encodes the EIP-3009 type string', () => {
    const fields = TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization.map(
      ({ name, type }) => `${type} ${name}`,
    );
    const encoded = `TransferWithAuthorization(${fields.join(',')})`;
    expect(encoded).toBe(
      'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
    );
    // USDC's TRANSFER_WITH_AUTHORIZATION_TYPEHASH.
    expect(keccak256(toHex(encoded))).toBe('0x7c7c6cdb67a18743f49ec6fa9b35f50d52ed05cbed4cc592e13b44501c1a2267');
  });

  it('signs and verifies with viem against a network’s USDC domain', async () => {
    const usdc = NETWORKS['base-sepolia'].usdc;
    const typedData = {
      domain: {
        name: usdc.name,
        version: usdc.version,
        chainId: NETWORKS['base-sepolia'].chainId,
        verifyingContract: usdc.address!,
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: {
        ...authorization,
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
      },
    } as const;
    const signed = await account.signTypedData(typedData);
    expect(await verifyTypedData({ ...typedData, address: account.address, signature: signed })).toBe(true);
    expect(hashTypedData(typedData)).toMatch(/^0x[0-9a-f]{64}$/);
    // The parser accepts what a real client signs.
    expect(parsePaymentPayload({ ...v1, payload: { signature: signed, authorization } })).toMatchObject({ ok: true });
  });
});

describe('parsePaymentPayload', () => {
  it('reads an x402 v1 payment', () => {
    expect(parsePaymentPayload(v1)).toEqual({
      ok: true,
      version: 1,
      scheme: 'exact',
      network: 'base-sepolia',
      payload: { signature, authorization },
    });
  });

  it('reads an x402 v2 payment, taking scheme and network from `accepted`', () => {
    expect(parsePaymentPayload(v2)).toEqual({
      ok: true,
      version: 2,
      scheme: 'exact',
      network: 'eip155:84532',
      payload: { signature, authorization },
      accepted,
    });
  });

  it('reads a decoded X-PAYMENT header', () => {
    expect(parsePaymentPayload(decodeBase64Json(encodeBase64Json(v1)))).toMatchObject({ ok: true, version: 1 });
  });

  it('returns copies holding only the known fields', () => {
    const parsed = parsePaymentPayload({
      ...v2,
      extra: 'dropped',
      accepted: { ...accepted, bonus: 1 },
      payload: { signature, authorization: { ...authorization, memo: 'x' }, more: true },
    });
    expect(parsed).toEqual({
      ok: true,
      version: 2,
      scheme: 'exact',
      network: 'eip155:84532',
      payload: { signature, authorization },
      accepted,
    });
    if (parsed.ok) expect(parsed.payload.authorization).not.toBe(authorization);
  });

  it('accepts a v2 requirement without extra, and a v1 payment for any named network', () => {
    const { extra: _, ...bare } = accepted;
    expect(parsePaymentPayload({ ...v2, accepted: bare })).toMatchObject({ ok: true, accepted: bare });
    expect(parsePaymentPayload({ ...v1, network: 'polygon' })).toMatchObject({ ok: true, network: 'polygon' });
  });

  it('accepts any 0x hex signature: 65-byte ECDSA, or longer smart-wallet ones', () => {
    expect(
      parsePaymentPayload({ ...v1, payload: { signature: '0x' + 'ab'.repeat(300), authorization } }),
    ).toMatchObject({ ok: true });
    expect(parsePaymentPayload({ ...v1, payload: { signature: '0x00', authorization } })).toMatchObject({ ok: true });
  });

  it('accepts the uint256 bounds', () => {
    const max = ((1n << 256n) - 1n).toString();
    expect(parsePaymentPayload(withAuth({ value: '0', validAfter: '0', validBefore: max }))).toMatchObject({
      ok: true,
    });
  });

  it.each<[string, unknown, string]>([
    ['null', null, 'payment must be an object'],
    ['a string', 'eyJ4NDAyVmVyc2lvbiI6MX0=', 'payment must be an object'],
    ['an array', [v1], 'payment must be an object'],
    ['version 3', { ...v1, x402Version: 3 }, 'x402Version must be 1 or 2'],
    ['a string version', { ...v1, x402Version: '1' }, 'x402Version must be 1 or 2'],
    ['no version', { ...v1, x402Version: undefined }, 'x402Version must be 1 or 2'],
    ['v1 without scheme', { ...v1, scheme: undefined }, 'scheme must be a non-empty string'],
    ['v1 with an empty network', { ...v1, network: '' }, 'network must be a non-empty string'],
    ['v1 without payload', { ...v1, payload: undefined }, 'payload must be an object'],
    ['v2 without accepted', { ...v2, accepted: undefined }, 'accepted must be an object'],
    [
      'v2 with a numeric amount',
      { ...v2, accepted: { ...accepted, amount: 10000 } },
      'accepted.amount must be a decimal integer string within uint256',
    ],
    [
      'v2 without payTo',
      { ...v2, accepted: { ...accepted, payTo: undefined } },
      'accepted.payTo must be a non-empty string',
    ],
    ['v2 without asset', { ...v2, accepted: { ...accepted, asset: '' } }, 'accepted.asset must be a non-empty string'],
    [
      'v2 without scheme',
      { ...v2, accepted: { ...accepted, scheme: 1 } },
      'accepted.scheme must be a non-empty string',
    ],
    [
      'v2 without network',
      { ...v2, accepted: { ...accepted, network: null } },
      'accepted.network must be a non-empty string',
    ],
    [
      'v2 with a string timeout',
      { ...v2, accepted: { ...accepted, maxTimeoutSeconds: '60' } },
      'accepted.maxTimeoutSeconds must be a non-negative integer',
    ],
    [
      'v2 with a negative timeout',
      { ...v2, accepted: { ...accepted, maxTimeoutSeconds: -1 } },
      'accepted.maxTimeoutSeconds must be a non-negative integer',
    ],
    [
      'v2 with a fractional timeout',
      { ...v2, accepted: { ...accepted, maxTimeoutSeconds: 1.5 } },
      'accepted.maxTimeoutSeconds must be a non-negative integer',
    ],
    ['v2 with a string extra', { ...v2, accepted: { ...accepted, extra: 'USDC' } }, 'accepted.extra must be an object'],
    ['v2 with a bad payload', { ...v2, payload: [] }, 'payload must be an object'],
  ])('rejects %s', (_, input, msg) => {
    expect(parsePaymentPayload(input)).toEqual({ ok: false, reason: 'invalid_payload', msg });
  });

  it.each<[string, unknown]>([
    ['missing', undefined],
    ['without 0x', signature.slice(2)],
    ['only 0x', '0x'],
    ['an odd number of digits', signature.slice(0, -1)],
    ['a non-hex digit', signature.slice(0, -2) + 'zz'],
    ['a number', 12],
    ['over-long', '0x' + 'ab'.repeat(8193)],
  ])('rejects a signature that is %s', (_, value) => {
    expect(failure({ ...v1, payload: { signature: value, authorization } })).toMatch(/^payload\.signature must be/);
  });

  it('rejects a missing authorization', () => {
    expect(failure({ ...v1, payload: { signature } })).toBe('payload.authorization must be an object');
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a short from',
      { from: PAY_TO.slice(0, -1) },
      'payload.authorization.from must be an EVM address (0x followed by 40 hex characters)',
    ],
    [
      'a to without 0x',
      { to: PAY_TO.slice(2) },
      'payload.authorization.to must be an EVM address (0x followed by 40 hex characters)',
    ],
    [
      'a numeric value',
      { value: 10000 },
      'payload.authorization.value must be a decimal integer string within uint256',
    ],
    [
      'a negative value',
      { value: '-1' },
      'payload.authorization.value must be a decimal integer string within uint256',
    ],
    [
      'a fractional value',
      { value: '0.01' },
      'payload.authorization.value must be a decimal integer string within uint256',
    ],
    ['a hex value', { value: '0x10' }, 'payload.authorization.value must be a decimal integer string within uint256'],
    ['an empty value', { value: '' }, 'payload.authorization.value must be a decimal integer string within uint256'],
    [
      'a value above uint256',
      { value: (1n << 256n).toString() },
      'payload.authorization.value must be a decimal integer string within uint256',
    ],
    [
      'a 79-digit value',
      { value: '1'.repeat(79) },
      'payload.authorization.value must be a decimal integer string within uint256',
    ],
    [
      'a spaced validAfter',
      { validAfter: ' 1740672089' },
      'payload.authorization.validAfter must be a decimal integer string within uint256',
    ],
    [
      'a numeric validBefore',
      { validBefore: 1740672154 },
      'payload.authorization.validBefore must be a decimal integer string within uint256',
    ],
    [
      'a short nonce',
      { nonce: authorization.nonce.slice(0, -2) },
      'payload.authorization.nonce must be 0x followed by 64 hex characters',
    ],
    [
      'a nonce without 0x',
      { nonce: authorization.nonce.slice(2) },
      'payload.authorization.nonce must be 0x followed by 64 hex characters',
    ],
  ])('rejects an authorization with %s', (_, change, msg) => {
    expect(failure(withAuth(change))).toBe(msg);
  });

  it('lets unexpected errors through', () => {
    const hostile = {
      get x402Version(): number {
        throw new SyntaxError('boom');
      },
    };
    expect(() => parsePaymentPayload(hostile)).toThrow(SyntaxError);
  });
});
