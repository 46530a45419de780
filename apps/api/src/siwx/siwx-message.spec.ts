import { signSiwxNonce, siwxDeclaration } from '@crawlgate/core';
import { createSIWxPayload, formatSIWEMessage } from '@x402/extensions/sign-in-with-x';
import { getAddress, verifyMessage } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { expectedSiweMessage } from './siwx-message';

describe('expectedSiweMessage', () => {
  const wallet = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
  const exp = Math.floor(Date.now() / 1000) + 300;
  const terms = (path: string) => ({
    domain: 'blog.example.com',
    path,
    caip2: 'eip155:8453',
    nonce: signSiwxNonce({ siteId: 's', path }, exp, 'cgsec_x'),
    exp,
  });

  // The decoded spellings are requestPath()'s, the paths the middleware binds ("/café" for "/caf%C3%A9").
  it.each(['/articles/1', '/', '/a?b', '/caf%C3%A9/x', '/café', '/a b', '/a"b', '/日本', '/100%'])(
    "equals @x402/extensions' formatSIWEMessage byte for byte (%s)",
    (path) => {
      const challenge = terms(path);
      const { info, supportedChains } = siwxDeclaration(challenge);
      expect(expectedSiweMessage(challenge, 8453, wallet.address)).toBe(
        formatSIWEMessage({ ...info, ...supportedChains[0] }, wallet.address),
      );
    },
  );

  it("verifies the signature @x402/extensions' client made, and not for another address", async () => {
    const challenge = terms('/articles/1');
    const { info, supportedChains } = siwxDeclaration(challenge);
    const payload = await createSIWxPayload({ ...info, ...supportedChains[0] }, wallet, info.uri);
    const message = expectedSiweMessage(challenge, 8453, getAddress(payload.address));
    expect(
      await verifyMessage({ address: wallet.address, message, signature: payload.signature as `0x${string}` }),
    ).toBe(true);
    const other = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
    expect(
      await verifyMessage({
        address: other.address,
        message: expectedSiweMessage(challenge, 8453, other.address),
        signature: payload.signature as `0x${string}`,
      }),
    ).toBe(false);
  });
});
