import { encodeBase64Json } from '@crawlgate/core';
import { authorizationOfHeader } from './held-authorizations';

const authorization = {
  from: '0x1111111111111111111111111111111111111111',
  to: '0x2222222222222222222222222222222222222222',
  value: '1000',
  validAfter: '0',
  validBefore: '1764201600',
  nonce: `0x${'ab'.repeat(32)}`,
};

describe('authorizationOfHeader', () => {
  it('reads the authorization of an x402 v1 or v2 exact payment header', () => {
    const expected = { from: authorization.from, nonce: authorization.nonce, validBefore: 1764201600n };
    const v1 = encodeBase64Json({ x402Version: 1, scheme: 'exact', payload: { signature: '0x', authorization } });
    const v2 = encodeBase64Json({ x402Version: 2, accepted: {}, payload: { signature: '0x', authorization } });
    expect(authorizationOfHeader(v1)).toEqual(expected);
    expect(authorizationOfHeader(v2)).toEqual(expected);
  });

  it.each([
    ['not base64 JSON', 'not a header'],
    ['no payload', encodeBase64Json({ x402Version: 1 })],
    [
      'a validBefore that is a number',
      encodeBase64Json({ payload: { authorization: { ...authorization, validBefore: 5 } } }),
    ],
    [
      'a validBefore that is not digits',
      encodeBase64Json({ payload: { authorization: { ...authorization, validBefore: '1e9' } } }),
    ],
    ['no nonce', encodeBase64Json({ payload: { authorization: { ...authorization, nonce: undefined } } })],
  ])('reads nothing from %s', (_name, header) => {
    expect(authorizationOfHeader(header)).toBeNull();
  });
});
