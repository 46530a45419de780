import {
  generateEd25519Jwk,
  importEd25519PrivateKey,
  importEd25519PublicKey,
  jwkThumbprint,
  readEd25519PrivateJwk,
  readEd25519PublicJwk,
  signEd25519,
  verifyEd25519,
} from './ed25519-jwk';

describe('jwkThumbprint', () => {
  it('matches RFC 8037 A.3', () => {
    expect(jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' })).toBe(
      'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    );
  });

  // The keyid of Cloudflare's Web Bot Auth examples; the draft's JSON example shows another kid for this key.
  it('matches the keyid Web Bot Auth examples give the RFC 9421 test key', () => {
    expect(jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs' })).toBe(
      'poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U',
    );
  });
});

describe('readEd25519PublicJwk / readEd25519PrivateJwk', () => {
  const x = 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs';
  it('keeps only the key members', () => {
    expect(readEd25519PublicJwk({ kty: 'OKP', crv: 'Ed25519', x, kid: 'k', use: 'sig' })).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x,
    });
  });

  it.each([
    ['another curve', { kty: 'OKP', crv: 'X25519', x }],
    ['another key type', { kty: 'EC', crv: 'Ed25519', x }],
    ['a short x', { kty: 'OKP', crv: 'Ed25519', x: x.slice(0, 40) }],
    ['padded x', { kty: 'OKP', crv: 'Ed25519', x: `${x}=` }],
    ['x as a number', { kty: 'OKP', crv: 'Ed25519', x: 1 }],
    ['null', null],
    ['a string', 'key'],
  ])('refuses %s', (_what, value) => {
    expect(readEd25519PublicJwk(value)).toBeNull();
  });

  it('wants d for a private key', () => {
    expect(readEd25519PrivateJwk({ kty: 'OKP', crv: 'Ed25519', x })).toBeNull();
    expect(readEd25519PrivateJwk({ kty: 'OKP', crv: 'Ed25519', x, d: 'short' })).toBeNull();
  });
});

describe('signEd25519 / verifyEd25519', () => {
  it('signs with a generated key and verifies only the same message, key and 64-byte signature', async () => {
    const key = await generateEd25519Jwk();
    const other = await generateEd25519Jwk();
    const signature = await signEd25519(await importEd25519PrivateKey(key), 'message');
    const publicKey = await importEd25519PublicKey(key);
    expect(await verifyEd25519(publicKey, 'message', signature)).toBe(true);
    expect(await verifyEd25519(publicKey, 'messagf', signature)).toBe(false);
    expect(await verifyEd25519(await importEd25519PublicKey(other), 'message', signature)).toBe(false);
    expect(await verifyEd25519(publicKey, 'message', signature.subarray(0, 63))).toBe(false);
  });
});
