import * as core from './index';

// The names other packages are coded against: renaming one breaks them.
const CONTRACT = [
  'base64urlEncode',
  'base64urlDecode',
  'utf8Encode',
  'utf8Decode',
  'encodeBase64Json',
  'decodeBase64Json',
  'MICROS_PER_USD',
  'MAX_PRICE_MICROS',
  'parsePriceUsd',
  'formatMicrosUsd',
  'validatePathPattern',
  'requestPath',
  'compilePriceTable',
  'PatternError',
  'signAccessToken',
  'verifyAccessToken',
  'peekAccessTokenPayload',
  'constantTimeEqual',
  'generateApiKey',
  'generateSiteToken',
  'generateAccessTokenSecret',
  'isApiKeyFormat',
  'isSiteTokenFormat',
  'sha256Hex',
  'isEvmAddress',
  'parseRetryAfter',
  'normalizeEvmAddress',
  'randomBytes',
  'randomHex32',
  'NETWORKS',
  'getNetwork',
  'caip2',
  'X402_REASONS',
  'TRANSFER_WITH_AUTHORIZATION_TYPES',
  'parsePaymentPayload',
  'exactAuthorization',
  'transferWithAuthorizationTypedData',
  'exactEvmPayload',
  'exactPaymentV1',
  'exactPaymentV2',
  'transferProofMessage',
  'WALLET_PROOF_HEADER',
  'WALLET_PROOF_MAX_SECONDS',
  'paymentHistoryMessage',
  'formatWalletProof',
  'readWalletProof',
  'isWalletProofTimely',
];

describe('@crawlgate/core', () => {
  it.each(CONTRACT)('exports %s', (name) => {
    expect(core).toHaveProperty(name);
    expect((core as Record<string, unknown>)[name]).toBeDefined();
  });

  it('works through the package alias', async () => {
    const viaAlias = await import('@crawlgate/core');
    expect(viaAlias.formatMicrosUsd(5_000n)).toBe('0.005');
  });
});
