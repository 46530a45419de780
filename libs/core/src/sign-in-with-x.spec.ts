import {
  createSIWxPayload,
  declareSIWxExtension,
  encodeSIWxHeader,
  parseSIWxHeader,
} from '@x402/extensions/sign-in-with-x';
import { privateKeyToAccount } from 'viem/accounts';
import { ACCESS_TOKEN_CLOCK_SKEW_SECONDS } from './access-token';
import { encodeBase64Json } from './base64url';
import { requestPath } from './request-path';
import {
  readSiwxProof,
  signSiwxNonce,
  siwxDeclaration,
  SIWX_CHALLENGE_SECONDS,
  siwxMessageFields,
  SIWX_NONCE_LENGTH,
  verifySiwxNonce,
} from './sign-in-with-x';

const scope = { siteId: '20000000-0000-4000-8000-000000000002', path: '/articles/1' };
const secret = 'cgsec_first';
const now = 1_800_000_000;
const exp = now + SIWX_CHALLENGE_SECONDS;

describe('SIWX nonces', () => {
  it('verify for the scope and secret they were signed for, until exp', () => {
    const nonce = signSiwxNonce(scope, exp, secret);
    expect(nonce).toMatch(/^[0-9a-f]+$/);
    expect(nonce).toHaveLength(SIWX_NONCE_LENGTH);
    expect(verifySiwxNonce(nonce, scope, [secret], now)).toEqual({ valid: true, exp });
    expect(verifySiwxNonce(nonce, scope, ['cgsec_rotated', secret], exp - 1)).toEqual({ valid: true, exp });
    expect(signSiwxNonce(scope, exp, secret)).not.toBe(nonce);
  });

  it('refuse another site, another path, another secret, an expired or edited nonce', () => {
    const nonce = signSiwxNonce(scope, exp, secret);
    expect(verifySiwxNonce(nonce, { ...scope, siteId: '20000000-0000-4000-8000-000000000003' }, [secret], now)).toEqual(
      { valid: false, reason: 'bad_signature' },
    );
    expect(verifySiwxNonce(nonce, { ...scope, path: '/articles/2' }, [secret], now)).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    expect(verifySiwxNonce(nonce, scope, ['cgsec_other'], now)).toEqual({ valid: false, reason: 'bad_signature' });
    expect(verifySiwxNonce(nonce, scope, [''], now)).toEqual({ valid: false, reason: 'bad_signature' });
    expect(verifySiwxNonce(nonce, scope, [secret], exp)).toEqual({ valid: false, reason: 'expired' });
    // A later expiry written into the nonce breaks its MAC.
    const later = nonce.slice(0, 32) + (exp + 3600).toString(16).padStart(12, '0') + nonce.slice(44);
    expect(verifySiwxNonce(later, scope, [secret], now)).toEqual({ valid: false, reason: 'bad_signature' });
    for (const bad of [
      undefined,
      42,
      '',
      nonce + '0',
      nonce.toUpperCase(),
      nonce.slice(1),
      'a'.repeat(SIWX_NONCE_LENGTH - 1) + 'g',
    ]) {
      expect(verifySiwxNonce(bad, scope, [secret], now)).toEqual({ valid: false, reason: 'malformed' });
    }
  });

  it('refuse a nonce that outlives a challenge’s life by more than the clocks’ allowed skew: no row kept for years', () => {
    const latest = now + SIWX_CHALLENGE_SECONDS + ACCESS_TOKEN_CLOCK_SKEW_SECONDS;
    expect(verifySiwxNonce(signSiwxNonce(scope, latest, secret), scope, [secret], now)).toEqual({
      valid: true,
      exp: latest,
    });
    for (const far of [latest + 1, now + 10 * 365 * 86_400])
      expect(verifySiwxNonce(signSiwxNonce(scope, far, secret), scope, [secret], now)).toEqual({
        valid: false,
        reason: 'too_long',
      });
  });

  it('cannot be signed without a secret or with a bad exp', () => {
    expect(() => signSiwxNonce(scope, exp, '')).toThrow(TypeError);
    expect(() => signSiwxNonce(scope, 1.5, secret)).toThrow(TypeError);
  });
});

describe('SIWX declaration', () => {
  const terms = {
    domain: 'blog.example.com',
    path: '/articles/1',
    caip2: 'eip155:8453',
    nonce: signSiwxNonce(scope, exp, secret),
    exp,
  };

  it('has the shape and schema of @x402/extensions, with our challenge in info', () => {
    const theirs = declareSIWxExtension({ network: 'eip155:8453', expirationSeconds: SIWX_CHALLENGE_SECONDS })[
      'sign-in-with-x'
    ];
    const ours = siwxDeclaration(terms);
    expect(ours.schema).toEqual(theirs.schema);
    expect(ours.supportedChains).toEqual(theirs.supportedChains);
    expect(ours.info).toEqual({
      domain: 'blog.example.com',
      uri: 'https://blog.example.com/articles/1',
      statement: expect.any(String),
      version: '1',
      nonce: terms.nonce,
      issuedAt: new Date(now * 1000).toISOString(),
      expirationTime: new Date(exp * 1000).toISOString(),
    });
  });

  it("is answered by @x402/extensions' client with a header readSiwxProof reads", async () => {
    const wallet = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    const { info, supportedChains } = siwxDeclaration(terms);
    const payload = await createSIWxPayload(
      { ...info, ...supportedChains[0] },
      wallet,
      'https://blog.example.com/articles/1',
    );
    const header = encodeSIWxHeader(payload);
    expect(parseSIWxHeader(header).signature).toBe(payload.signature);
    expect(readSiwxProof(header)).toEqual({
      address: wallet.address,
      signature: payload.signature,
      nonce: terms.nonce,
      domain: terms.domain,
      uri: info.uri,
      chainId: 'eip155:8453',
    });
  });

  it('reads no proof from what is not one', () => {
    const good = {
      address: '0x' + '1'.repeat(40),
      signature: '0xabcd',
      nonce: 'n',
      domain: 'd',
      uri: 'u',
      chainId: 'eip155:1',
    };
    expect(readSiwxProof(encodeBase64Json(good))).not.toBeNull();
    for (const bad of [
      undefined,
      '',
      'not base64!',
      encodeBase64Json([good]),
      encodeBase64Json({ ...good, address: '0x123' }),
      encodeBase64Json({ ...good, signature: 'abcd' }),
      encodeBase64Json({ ...good, signature: '0xabc' }),
      encodeBase64Json({ ...good, nonce: 5 }),
      encodeBase64Json({ ...good, chainId: undefined }),
      'A'.repeat(8193),
    ]) {
      expect(readSiwxProof(bad)).toBeNull();
    }
  });
});

describe('SIWX message URI of a path requestPath() decodes', () => {
  // The path a sign-in binds is requestPath()'s spelling, decoded ("/café", "/a b"): the message's
  // URI must still be one (RFC 3986), or no SIWE message can carry it (viem's createSiweMessage and
  // x402's client throw, and a wallet that paid is asked to pay again).
  const wallet = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
  const challengeFor = (path: string) => ({
    domain: 'blog.example.com',
    path,
    caip2: 'eip155:8453',
    nonce: signSiwxNonce({ ...scope, path }, exp, secret),
    exp,
  });

  it.each([
    // [as requested, the path requestPath() binds, the URI the message names]
    ['/caf%C3%A9', '/café', 'https://blog.example.com/caf%C3%A9'],
    ['/a%20b', '/a b', 'https://blog.example.com/a%20b'],
    ['/a%22b', '/a"b', 'https://blog.example.com/a%22b'],
    ['/%E6%97%A5%E6%9C%AC', '/日本', 'https://blog.example.com/%E6%97%A5%E6%9C%AC'],
    ['/a%3Fb%23c%5B0%5D', '/a?b#c[0]', 'https://blog.example.com/a%3Fb%23c%5B0%5D'],
    ['/100%', '/100%', 'https://blog.example.com/100%25'],
  ])('percent-encodes what a URI path cannot hold (%s → %s)', async (requested, path, uri) => {
    expect(requestPath(requested)).toBe(path);
    const challenge = challengeFor(path);
    expect(siwxMessageFields(challenge).uri).toBe(uri);
    // x402's own client answers the challenge (it throws on a URI that is none)...
    const { info, supportedChains } = siwxDeclaration(challenge);
    const payload = await createSIWxPayload({ ...info, ...supportedChains[0] }, wallet, info.uri);
    expect(readSiwxProof(encodeSIWxHeader(payload))).toMatchObject({ uri, nonce: challenge.nonce });
    // ...and the nonce still binds the path, not the URI.
    expect(verifySiwxNonce(challenge.nonce, { ...scope, path }, [secret], now)).toEqual({ valid: true, exp });
    expect(
      verifySiwxNonce(challenge.nonce, { ...scope, path: uri.slice('https://blog.example.com'.length) }, [secret], now),
    ).toEqual({ valid: false, reason: 'bad_signature' });
  });

  it.each([
    '/caf%C3%A9/x', // an escape already there is kept, not escaped again
    '/caf%c3%a9', // as written
    '/a%2Fb', // requestPath() keeps an escaped slash...
    '/a%25b', // ...and an escaped "%"
    "/a;b=c,d!$&'()*+:@~-._/", // RFC 3986 pchar and "/": left alone
  ])('keeps a path a URI can hold as it is (%s)', (path) => {
    expect(siwxMessageFields(challengeFor(path)).uri).toBe(`https://blog.example.com${path}`);
  });
});
