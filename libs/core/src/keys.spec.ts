import { createHash } from 'node:crypto';
import {
  ACCESS_TOKEN_SECRET_PREFIX,
  API_KEY_PREFIX,
  generateAccessTokenSecret,
  generateApiKey,
  generateSiteToken,
  isAccessTokenSecretFormat,
  isApiKeyFormat,
  isEvmAddress,
  holdsEip55Checksum,
  isPayoutAddress,
  isSiteTokenFormat,
  normalizeEvmAddress,
  randomBytes,
  randomHex32,
  sha256Hex,
  SITE_TOKEN_PREFIX,
} from './keys';

const BODY = 'A'.repeat(42) + 'w';

describe('randomBytes', () => {
  it('returns n random bytes', () => {
    expect(randomBytes(0)).toEqual(new Uint8Array(0));
    expect(randomBytes(16)).toHaveLength(16);
    expect(randomBytes(32)).not.toEqual(randomBytes(32));
  });

  it('hands out each pooled byte once: small requests never overlap, across refills, and are copies', () => {
    // 16-byte requests over three pools: any two sharing bytes would be equal.
    const seen = new Set<string>();
    for (let i = 0; i < 800; i++) seen.add(Buffer.from(randomBytes(16)).toString('hex'));
    expect(seen.size).toBe(800);
    const first = randomBytes(8);
    const copy = Uint8Array.from(first);
    randomBytes(8);
    first.fill(0);
    expect(randomBytes(8)).not.toEqual(new Uint8Array(8));
    expect(copy).not.toEqual(new Uint8Array(8));
    expect(first.buffer.byteLength).toBe(8); // its own memory, not a view of the pool
  });

  it('fills more than the 65,536 bytes getRandomValues takes at once', () => {
    const big = randomBytes(200_000);
    expect(big).toHaveLength(200_000);
    // Each 64 KiB chunk was filled: none is left all zero.
    for (const start of [0, 65_536, 131_072, 196_608])
      expect(big.subarray(start, start + 1024).some((b) => b !== 0)).toBe(true);
  });

  it.each([-1, 1.5, NaN, Infinity])('throws RangeError for %p', (n) => {
    expect(() => randomBytes(n)).toThrow(RangeError);
  });
});

describe('randomHex32', () => {
  it('is 0x and 64 lower-case hex digits, fresh each time', () => {
    const nonce = randomHex32();
    expect(nonce).toMatch(/^0x[0-9a-f]{64}$/);
    expect(randomHex32()).not.toBe(nonce);
  });
});

describe('generated credentials', () => {
  it('uses the prefixes of the spec', () => {
    expect([API_KEY_PREFIX, SITE_TOKEN_PREFIX, ACCESS_TOKEN_SECRET_PREFIX]).toEqual(['xk_pub_', 'st_', 'cgsec_']);
  });

  it.each([
    ['API key', generateApiKey, 'xk_pub_', isApiKeyFormat],
    ['site token', generateSiteToken, 'st_', isSiteTokenFormat],
    ['access token secret', generateAccessTokenSecret, 'cgsec_', isAccessTokenSecretFormat],
  ])('%s: prefix + 43 base64url characters (32 random bytes), unique', (_, generate, prefix, check) => {
    const key = generate();
    expect(key.startsWith(prefix)).toBe(true);
    expect(key.slice(prefix.length)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(check(key)).toBe(true);
    expect(new Set(Array.from({ length: 100 }, generate)).size).toBe(100);
  });
});

describe('credential formats', () => {
  it('accepts a prefix with exactly 43 base64url characters', () => {
    expect(isApiKeyFormat('xk_pub_' + BODY)).toBe(true);
    expect(isApiKeyFormat('xk_pub_' + '-_09azAZ'.repeat(5) + 'abc')).toBe(true);
    expect(isSiteTokenFormat('st_' + BODY)).toBe(true);
    expect(isAccessTokenSecretFormat('cgsec_' + BODY)).toBe(true);
  });

  it.each([
    ['a short body', 'xk_pub_' + BODY.slice(1)],
    ['a long body', 'xk_pub_' + BODY + 'A'],
    ['padding', 'xk_pub_' + BODY.slice(1) + '='],
    ['standard base64', 'xk_pub_' + BODY.slice(1) + '+'],
    ['whitespace', 'xk_pub_' + BODY + ' '],
    ['another prefix', 'st_' + BODY],
    ['upper-case prefix', 'XK_PUB_' + BODY],
    ['no prefix', BODY],
    ['a Bearer prefix', 'Bearer xk_pub_' + BODY],
  ])('rejects an API key with %s', (_, key) => {
    expect(isApiKeyFormat(key)).toBe(false);
  });

  it('rejects a site token with another prefix, and non-strings', () => {
    expect(isSiteTokenFormat('xk_pub_' + BODY)).toBe(false);
    expect(isSiteTokenFormat('st_' + BODY.slice(2))).toBe(false);
    for (const value of [undefined, null, 42, ['st_' + BODY], { key: 'st_' + BODY }]) {
      expect(isSiteTokenFormat(value)).toBe(false);
      expect(isApiKeyFormat(value)).toBe(false);
      expect(isAccessTokenSecretFormat(value)).toBe(false);
    }
  });
});

describe('sha256Hex', () => {
  it('hashes the UTF-8 text to lower-case hex', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateApiKey();
    expect(sha256Hex(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(sha256Hex('café')).toBe(createHash('sha256').update('café', 'utf8').digest('hex'));
  });
});

describe('EVM addresses', () => {
  const checksummed = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

  it('accepts 0x and 40 hex digits in any case, checksum or not', () => {
    expect(isEvmAddress(checksummed)).toBe(true);
    expect(isEvmAddress(checksummed.toLowerCase())).toBe(true);
    expect(isEvmAddress('0x' + checksummed.slice(2).toUpperCase())).toBe(true);
    // A wrong EIP-55 checksum is still an address here: it is only a lookup key.
    expect(isEvmAddress('0x833589FCD6eDb6E08f4c7C32D4f71b54bdA02913')).toBe(true);
  });

  it.each([
    ['no 0x', checksummed.slice(2)],
    ['0X', '0X' + checksummed.slice(2)],
    ['39 digits', checksummed.slice(0, -1)],
    ['41 digits', checksummed + '0'],
    ['a non-hex digit', checksummed.slice(0, -1) + 'g'],
    ['whitespace', checksummed + '\n'],
    ['an empty string', ''],
  ])('rejects an address with %s', (_, address) => {
    expect(isEvmAddress(address)).toBe(false);
  });

  it('rejects non-strings', () => {
    for (const value of [undefined, null, 0x833589, [checksummed]]) expect(isEvmAddress(value)).toBe(false);
  });

  it('normalises to lower case', () => {
    expect(normalizeEvmAddress(checksummed)).toBe('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
    expect(normalizeEvmAddress('0x' + checksummed.slice(2).toUpperCase())).toBe(normalizeEvmAddress(checksummed));
  });

  it('throws TypeError when normalising a non-address', () => {
    expect(() => normalizeEvmAddress('0x1234')).toThrow(TypeError);
  });
});

describe('isPayoutAddress', () => {
  // EIP-55's own examples.
  const checksummed = [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ];

  it('takes a checksummed address, and one in all lower or all upper case', () => {
    for (const address of checksummed) {
      expect(isPayoutAddress(address)).toBe(true);
      expect(isPayoutAddress(address.toLowerCase())).toBe(true);
      expect(isPayoutAddress(`0x${address.slice(2).toUpperCase()}`)).toBe(true);
    }
  });

  it('refuses a mixed-case address whose checksum fails, the zero address and non-addresses', () => {
    for (const address of checksummed) {
      const i = address.slice(2).search(/[a-fA-F]/) + 2;
      const flipped =
        address.slice(0, i) +
        (address[i] === address[i].toLowerCase() ? address[i].toUpperCase() : address[i].toLowerCase()) +
        address.slice(i + 1);
      expect(isPayoutAddress(flipped)).toBe(false);
    }
    for (const bad of ['0x' + '0'.repeat(40), '0x' + 'g'.repeat(40), '0x1234', 42, null])
      expect(isPayoutAddress(bad)).toBe(false);
  });

  it('holdsEip55Checksum: lower case or the checksum, as viem hashes addresses; the zero address included', () => {
    expect(holdsEip55Checksum(checksummed[0])).toBe(true);
    expect(holdsEip55Checksum('0x' + '0'.repeat(40))).toBe(true);
    expect(holdsEip55Checksum(checksummed[0].toLowerCase())).toBe(true);
    expect(holdsEip55Checksum(`0x${checksummed[0].slice(2).toUpperCase()}`)).toBe(false); // viem refuses it
    expect(holdsEip55Checksum(checksummed[0].replace('aA', 'Aa'))).toBe(false);
  });
});
