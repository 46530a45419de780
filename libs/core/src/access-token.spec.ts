import { createHmac } from 'node:crypto';
import {
  ACCESS_TOKEN_CLOCK_SKEW_SECONDS,
  ACCESS_TOKEN_TTL_SECONDS,
  type AccessTokenPayload,
  fitsAccessToken,
  MAX_ACCESS_TOKEN_LENGTH,
  MAX_ACCESS_TOKEN_TTL_SECONDS,
  MAX_TOKEN_PATH_BYTES,
  isAccessTokenShaped,
  peekAccessTokenPayload,
  signAccessToken,
  verifyAccessToken,
} from './access-token';
import { base64urlDecode, base64urlEncode, utf8Decode, utf8Encode } from './base64url';
import { signGate } from './gate';
import { MAX_UNIX_SECONDS } from './limits';
import { MAX_PRICE_MICROS } from './price';

const SECRET = 'cgsec_current-secret-for-tests';
const OLD_SECRET = 'cgsec_previous-secret-for-tests';
const NOW = 1_750_000_000;
const payload: AccessTokenPayload = {
  gate_id: 'gate_123',
  site_id: '6f1c2a3e-0000-4000-8000-000000000001',
  url: '/blog/a',
  kid: 'k1',
  iat: NOW,
  exp: NOW + ACCESS_TOKEN_TTL_SECONDS,
};
const base = { secret: SECRET, siteId: payload.site_id, now: NOW };
/** Site-wide: no page named. */
const opts = { ...base, anyPath: true as const };
const reasonOf = (token: string, options: Parameters<typeof verifyAccessToken>[1] = opts) => {
  const check = verifyAccessToken(token, options);
  return check.valid ? 'valid' : check.reason;
};
/** A token over any payload text, signed with SECRET: reaches the checks after the signature. */
const signRaw = (json: string, secret = SECRET) => {
  const segment = base64urlEncode(utf8Encode(json));
  return `${segment}.${base64urlEncode(createHmac('sha256', secret).update(segment).digest())}`;
};
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Changes the character at `index` by 4 positions in the alphabet: the low 2 bits stay as they were. */
const flip = (text: string, index: number) =>
  text.slice(0, index) + ALPHABET[(ALPHABET.indexOf(text[index]) + 4) % 64] + text.slice(index + 1);
/** Sets the lowest bit of the last character: unused in a text whose length is not a multiple of 4. */
const nonCanonicalEnd = (text: string) => text.slice(0, -1) + ALPHABET[ALPHABET.indexOf(text[text.length - 1]) | 1];

describe('signAccessToken', () => {
  const token = signAccessToken(payload, SECRET);

  it('writes base64url(JSON payload).base64url(HMAC-SHA256(secret, payload segment))', () => {
    const [segment, signature] = token.split('.');
    expect(utf8Decode(base64urlDecode(segment)!)).toBe(JSON.stringify(payload));
    expect(signature).toBe(createHmac('sha256', SECRET).update(segment).digest('base64url'));
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it('signs exactly the payload fields, in a fixed order', () => {
    const richer = {
      exp: payload.exp,
      iat: payload.iat,
      kid: 'k1',
      url: '/blog/a',
      site_id: payload.site_id,
      gate_id: 'gate_123',
      extra: 'x',
    };
    expect(signAccessToken(richer as AccessTokenPayload, SECRET)).toBe(token);
  });

  it('is deterministic and depends on the secret', () => {
    expect(signAccessToken(payload, SECRET)).toBe(token);
    expect(signAccessToken(payload, OLD_SECRET)).not.toBe(token);
  });

  it('keeps non-ASCII paths intact', () => {
    const unicode = signAccessToken({ ...payload, url: '/café/😀' }, SECRET);
    expect(verifyAccessToken(unicode, { ...base, url: '/caf%C3%A9/%F0%9F%98%80' })).toEqual({
      valid: true,
      payload: { ...payload, url: '/café/😀' },
    });
  });

  it.each<[string, Partial<Record<keyof AccessTokenPayload, unknown>>]>([
    ['an empty gate_id', { gate_id: '' }],
    ['an empty site_id', { site_id: '' }],
    ['an empty kid', { kid: '' }],
    ['a url not starting with "/"', { url: 'blog/a' }],
    ['a numeric gate_id', { gate_id: 5 }],
    ['fractional seconds', { iat: NOW + 0.5 }],
    ['milliseconds', { exp: Date.now() }],
    ['a negative time', { iat: -1 }],
    ['a string time', { exp: String(NOW) }],
    ['a missing field', { kid: undefined }],
  ])('refuses a payload with %s', (_, change) => {
    expect(() => signAccessToken({ ...payload, ...change } as AccessTokenPayload, SECRET)).toThrow(TypeError);
  });

  it('refuses a non-object payload and an empty secret', () => {
    expect(() => signAccessToken(null as unknown as AccessTokenPayload, SECRET)).toThrow(TypeError);
    expect(() => signAccessToken([] as unknown as AccessTokenPayload, SECRET)).toThrow(TypeError);
    expect(() => signAccessToken(payload, '')).toThrow(TypeError);
    expect(() => signAccessToken(payload, undefined as unknown as string)).toThrow(TypeError);
  });

  it('refuses to sign a token longer than verification accepts', () => {
    expect(() => signAccessToken({ ...payload, url: '/' + 'a'.repeat(MAX_ACCESS_TOKEN_LENGTH) }, SECRET)).toThrow(
      TypeError,
    );
    const longest = signAccessToken({ ...payload, url: '/' + 'a'.repeat(2900) }, SECRET);
    expect(longest.length).toBeLessThanOrEqual(MAX_ACCESS_TOKEN_LENGTH);
    expect(reasonOf(longest)).toBe('valid');
  });
});

describe('fitsAccessToken', () => {
  it.each([
    ['ASCII', 'a', 1],
    ['a character JSON escapes', '"', 2],
    ['a wide character', '一', 3],
    ['a surrogate pair', '😀', 4],
  ])('bounds a path of %s by its JSON string’s UTF-8 bytes', (_what, unit, bytes) => {
    // "/" and the two quotes of the JSON string weigh 3 bytes.
    const most = Math.floor((MAX_TOKEN_PATH_BYTES - 3) / bytes);
    expect(fitsAccessToken('/' + unit.repeat(most))).toBe(true);
    expect(fitsAccessToken('/' + unit.repeat(most + 1))).toBe(false);
  });

  it('fits every path it accepts in a token, with a site’s real field sizes', () => {
    const site = {
      ...payload,
      gate_id: crypto.randomUUID(),
      kid: 'k'.repeat(64),
      exp: MAX_UNIX_SECONDS,
      iat: MAX_UNIX_SECONDS,
    };
    for (const unit of ['a', '"', '\\', '一', '😀', '\u0001']) {
      let path = '/';
      while (fitsAccessToken(path + unit)) path += unit;
      expect(() => signAccessToken({ ...site, url: path }, SECRET)).not.toThrow();
      // And in the gate that sells it.
      const gate = {
        siteId: site.site_id,
        ref: site.gate_id,
        path,
        micros: MAX_PRICE_MICROS,
        chainId: 2 ** 31,
        asset: `0x${'a'.repeat(40)}` as const,
        payTo: `0x${'b'.repeat(40)}` as const,
        iat: site.iat,
        exp: site.exp,
      };
      expect(() => signGate(gate, SECRET)).not.toThrow();
    }
  });
});

describe('verifyAccessToken', () => {
  const token = signAccessToken(payload, SECRET);

  it('accepts a fresh token for its site and path', () => {
    expect(verifyAccessToken(token, { ...base, url: '/blog/a' })).toEqual({ valid: true, payload });
    expect(verifyAccessToken(token, opts)).toEqual({ valid: true, payload });
  });

  it('compares the path as requestPath() reads it', () => {
    expect(reasonOf(token, { ...base, url: 'https://example.com/blog/a?utm=x#y' })).toBe('valid');
    expect(reasonOf(token, { ...base, url: '/blog/%61' })).toBe('valid');
  });

  describe('malformed', () => {
    const [segment, signature] = token.split('.');

    it.each([
      ['an empty string', ''],
      ['one segment', segment],
      ['three segments', `${token}.x`],
      ['an empty payload segment', `.${signature}`],
      ['an empty signature', `${segment}.`],
      ['a padded payload', `${segment}==.${signature}`],
      ['a padded signature', `${segment}.${signature}=`],
      ['standard base64 characters', `${segment.replace(/./, '+')}.${signature}`],
      ['whitespace', ` ${token}`],
      ['a short signature', `${segment}.${signature.slice(0, 40)}`],
      ['a long signature', `${segment}.${signature}AAAA`],
      ['an over-long token', `${segment}.${signature}`.padStart(MAX_ACCESS_TOKEN_LENGTH + 1, 'A')],
    ])('rejects %s', (_, text) => {
      expect(reasonOf(text)).toBe('malformed');
    });

    it('rejects a non-canonical last character of the signature', () => {
      // 32 bytes use 256 of the last 258 bits: the final character's two low bits must be zero.
      expect(reasonOf(`${segment}.${nonCanonicalEnd(signature)}`)).toBe('malformed');
    });

    it('rejects a non-canonical last character of the payload', () => {
      const odd = signAccessToken({ ...payload, gate_id: 'gate_1234' }, SECRET).split('.');
      expect(odd[0].length % 4).not.toBe(0);
      expect(reasonOf(odd.join('.'))).toBe('valid');
      expect(reasonOf(`${nonCanonicalEnd(odd[0])}.${odd[1]}`)).toBe('malformed');
    });

    it.each([
      ['not JSON', '{gate_id'],
      ['a JSON array', JSON.stringify([payload])],
      ['JSON null', 'null'],
      ['a JSON string', '"token"'],
      ['a missing field', JSON.stringify({ ...payload, kid: undefined })],
      ['a numeric site_id', JSON.stringify({ ...payload, site_id: 7 })],
      ['a string exp', JSON.stringify({ ...payload, exp: String(payload.exp) })],
      ['a fractional exp', JSON.stringify({ ...payload, exp: payload.exp + 0.5 })],
      ['a url without a leading slash', JSON.stringify({ ...payload, url: 'blog/a' })],
      ['a byte order mark', '\uFEFF' + JSON.stringify(payload)],
    ])('rejects a correctly signed payload that is %s', (_, json) => {
      expect(reasonOf(signRaw(json))).toBe('malformed');
    });

    it('rejects a payload that is not UTF-8', () => {
      const segmentBytes = base64urlEncode(Uint8Array.from([0x7b, 0xff, 0x7d]));
      const mac = createHmac('sha256', SECRET).update(segmentBytes).digest('base64url');
      expect(reasonOf(`${segmentBytes}.${mac}`)).toBe('malformed');
    });

    it('rejects a non-string token', () => {
      expect(reasonOf(undefined as unknown as string)).toBe('malformed');
      expect(reasonOf({ toString: () => token } as unknown as string)).toBe('malformed');
    });
  });

  describe('bad_signature', () => {
    it('rejects a token signed with another secret', () => {
      expect(reasonOf(signAccessToken(payload, 'cgsec_someone-else'))).toBe('bad_signature');
    });

    it('rejects a tampered payload character', () => {
      const [segment, signature] = token.split('.');
      // Flipped characters make invalid JSON (malformed) or another payload (bad_signature); never valid.
      for (let index = 0; index < segment.length; index++) {
        expect(reasonOf(`${flip(segment, index)}.${signature}`)).toMatch(/^(bad_signature|malformed)$/);
      }
      // A payload edited into another valid payload, keeping the old signature.
      const forged = base64urlEncode(utf8Encode(JSON.stringify({ ...payload, url: '/premium' })));
      expect(reasonOf(`${forged}.${signature}`)).toBe('bad_signature');
      const extended = base64urlEncode(utf8Encode(JSON.stringify({ ...payload, exp: payload.exp + 86_400 })));
      expect(reasonOf(`${extended}.${signature}`)).toBe('bad_signature');
    });

    it('rejects a tampered signature character, the last one included', () => {
      const [segment, signature] = token.split('.');
      for (const index of [0, 10, 21, 41, 42])
        expect(reasonOf(`${segment}.${flip(signature, index)}`)).toBe('bad_signature');
    });

    it("rejects another token's signature", () => {
      const other = signAccessToken({ ...payload, gate_id: 'gate_456' }, SECRET);
      expect(reasonOf(`${token.split('.')[0]}.${other.split('.')[1]}`)).toBe('bad_signature');
    });

    it('checks the signature before expiry, site and path', () => {
      const stale = signAccessToken({ ...payload, exp: NOW - 1 }, 'cgsec_someone-else');
      expect(reasonOf(stale, { secret: SECRET, siteId: 'other-site', url: '/elsewhere', now: NOW })).toBe(
        'bad_signature',
      );
    });

    it('never verifies with an empty secret or an empty secret list', () => {
      const unsigned = `${token.split('.')[0]}.${createHmac('sha256', '').update(token.split('.')[0]).digest('base64url')}`;
      expect(reasonOf(unsigned, { ...opts, secret: '' })).toBe('bad_signature');
      expect(reasonOf(unsigned, { ...opts, secret: [''] })).toBe('bad_signature');
      expect(reasonOf(token, { ...opts, secret: [] })).toBe('bad_signature');
    });
  });

  describe('secret rotation', () => {
    const oldToken = signAccessToken({ ...payload, kid: 'k0' }, OLD_SECRET);

    it('accepts a token signed with any of the given secrets', () => {
      expect(reasonOf(oldToken, { ...opts, secret: [SECRET, OLD_SECRET] })).toBe('valid');
      expect(reasonOf(token, { ...opts, secret: [SECRET, OLD_SECRET] })).toBe('valid');
      expect(reasonOf(token, { ...opts, secret: [OLD_SECRET, SECRET] })).toBe('valid');
    });

    it('rejects the old secret once it is dropped', () => {
      expect(reasonOf(oldToken, { ...opts, secret: [SECRET] })).toBe('bad_signature');
      expect(reasonOf(oldToken, opts)).toBe('bad_signature');
    });

    it('verifies with a keyed secret only the tokens that name its kid', () => {
      const keyed = [
        { secret: SECRET, kid: 'k1' },
        { secret: OLD_SECRET, kid: 'k0' },
      ];
      expect(reasonOf(token, { ...opts, secret: keyed })).toBe('valid');
      expect(reasonOf(oldToken, { ...opts, secret: keyed })).toBe('valid');
      // The right secret under another key id: a token naming k0 signed with the current secret is none the API made.
      const misnamed = signAccessToken({ ...payload, kid: 'k0' }, SECRET);
      expect(reasonOf(misnamed, { ...opts, secret: keyed })).toBe('bad_signature');
      expect(reasonOf(token, { ...opts, secret: [{ secret: SECRET, kid: 'k0' }] })).toBe('bad_signature');
      // Without a kid a secret verifies whatever the token names, as a plain string does.
      expect(reasonOf(misnamed, { ...opts, secret: [{ secret: SECRET }] })).toBe('valid');
    });

    it('stops verifying with a secret at its validUntil, whatever the exp of a token it signed', () => {
      const retiring = (validUntil: unknown) => ({
        ...opts,
        secret: [SECRET, { secret: OLD_SECRET, kid: 'k0', validUntil: validUntil as number }],
      });
      const until = NOW + 60;
      expect(payload.exp).toBeGreaterThan(until);
      for (const validUntil of [until, new Date(until * 1000), new Date(until * 1000).toISOString()]) {
        expect(reasonOf(oldToken, { ...retiring(validUntil), now: until - 1 })).toBe('valid');
        expect(reasonOf(oldToken, { ...retiring(validUntil), now: until - 0.001 })).toBe('valid');
        expect(reasonOf(oldToken, { ...retiring(validUntil), now: until })).toBe('bad_signature');
        expect(reasonOf(oldToken, { ...retiring(validUntil), now: until + 3600 })).toBe('bad_signature');
        // The other secrets go on verifying.
        expect(reasonOf(token, { ...retiring(validUntil), now: until + 60 })).toBe('valid');
      }
    });

    it('verifies nothing with a secret whose validUntil cannot be read, nor under a NaN clock', () => {
      // null is what a rotation answers as previous_valid_until when the previous secret was revoked.
      for (const validUntil of [null, NaN, Infinity, 'soon', '', {}, new Date(NaN), -1, true])
        expect(
          reasonOf(oldToken, { ...opts, secret: [{ secret: OLD_SECRET, validUntil: validUntil as number }] }),
        ).toBe('bad_signature');
      expect(
        reasonOf(oldToken, { ...opts, now: NaN, secret: [{ secret: OLD_SECRET, validUntil: payload.exp + 60 }] }),
      ).not.toBe('valid');
    });

    it('reads a validUntil in milliseconds, or a date and time without its offset, as unreadable: the secret verifies nothing', () => {
      const until = NOW + 60;
      const iso = new Date(until * 1000).toISOString(); // 2025-06-15T15:07:20.000Z
      for (const validUntil of [
        until * 1000, // Date.parse(…) or getTime(): 57,000 years of seconds
        MAX_UNIX_SECONDS + 1,
        iso.slice(0, -1), // no Z: local time, which differs from server to server
        iso.slice(0, 10), // a date alone
        `${iso.slice(0, 8)}31T00:00:00Z`, // 31 June: read as 1 July by Date.parse
        '2025-02-29T00:00:00Z',
        `${iso} `,
      ])
        expect(reasonOf(oldToken, { ...opts, now: until - 30, secret: [{ secret: OLD_SECRET, validUntil }] })).toBe(
          'bad_signature',
        );
      // Written with an offset, the same instant is read.
      const offset = `${iso.slice(0, 11)}${String(Number(iso.slice(11, 13)) + 2).padStart(2, '0')}${iso.slice(13, 19)}+02:00`;
      const bounded = (validUntil: string, now: number) =>
        reasonOf(oldToken, { ...opts, now, secret: [{ secret: OLD_SECRET, validUntil }] });
      expect([bounded(offset, until - 1), bounded(offset, until)]).toEqual(['valid', 'bad_signature']);
      expect([bounded('2028-02-29T00:00:00Z', until), bounded(iso, until - 1)]).toEqual(['valid', 'valid']);
    });

    it('reads a validUntil present but undefined as unreadable, not as no bound', () => {
      const unset = { secret: OLD_SECRET, validUntil: undefined };
      expect(reasonOf(oldToken, { ...opts, secret: [unset] })).toBe('bad_signature');
      expect(reasonOf(oldToken, { ...opts, secret: [{ secret: OLD_SECRET }] })).toBe('valid');
    });

    it('holds a secret listed more than once to its strictest entry', () => {
      const retired = { secret: OLD_SECRET, kid: 'k0', validUntil: NOW - 1 };
      for (const secret of [
        [OLD_SECRET, retired],
        [retired, OLD_SECRET],
        [
          { secret: OLD_SECRET, kid: 'k0' },
          { secret: OLD_SECRET, kid: 'k9' },
        ],
      ])
        expect(reasonOf(oldToken, { ...opts, secret })).toBe('bad_signature');
      // Other secrets are judged on their own entries.
      expect(reasonOf(token, { ...opts, secret: [SECRET, retired] })).toBe('valid');
    });

    it('reads only an entry’s own properties: nothing inherited makes a secret, a kid or a bound', () => {
      const inherited = Object.create({ secret: OLD_SECRET });
      expect(reasonOf(oldToken, { ...opts, secret: [inherited] })).toBe('bad_signature');
      const unbounded = Object.assign(Object.create({ validUntil: NOW - 1, kid: 'k9' }), { secret: OLD_SECRET });
      expect(reasonOf(oldToken, { ...opts, secret: [unbounded] })).toBe('valid');
    });

    it('takes a clock that is not a number as no time at all: nothing verifies', () => {
      const ahead = signAccessToken({ ...payload, iat: NOW + 3600, exp: NOW + 4000 }, SECRET);
      expect(reasonOf(ahead, { ...opts, now: String(NOW) as unknown as number })).not.toBe('valid');
      expect(reasonOf(token, { ...opts, now: String(NOW) as unknown as number })).not.toBe('valid');
    });

    it('takes no entry that is neither a string nor a keyed secret as one', () => {
      for (const entry of [null, undefined, 42, {}, { secret: '' }, { secret: 7 }, { secret: OLD_SECRET, kid: 7 }])
        expect(reasonOf(oldToken, { ...opts, secret: [entry as string] })).toBe('bad_signature');
    });
  });

  describe('lifetime', () => {
    const lived = (iat: number, exp: number) => signRaw(JSON.stringify({ ...payload, iat, exp }));

    it('refuses a token that lives longer than the API ever issues one for', () => {
      expect(reasonOf(lived(NOW, NOW + MAX_ACCESS_TOKEN_TTL_SECONDS), opts)).toBe('valid');
      expect(reasonOf(lived(NOW, NOW + MAX_ACCESS_TOKEN_TTL_SECONDS + 1), opts)).toBe('malformed');
      expect(reasonOf(lived(0, NOW + 60), opts)).toBe('malformed');
      // Checked after the signature: a forged token is bad_signature whatever it claims.
      expect(reasonOf(lived(0, NOW + 60), { ...opts, secret: OLD_SECRET })).toBe('bad_signature');
    });

    it('refuses a token issued further ahead of the clock than ACCESS_TOKEN_CLOCK_SKEW_SECONDS', () => {
      const ahead = (seconds: number) => lived(NOW + seconds, NOW + seconds + 60);
      expect(reasonOf(ahead(ACCESS_TOKEN_CLOCK_SKEW_SECONDS), opts)).toBe('valid');
      expect(reasonOf(ahead(ACCESS_TOKEN_CLOCK_SKEW_SECONDS + 1), opts)).toBe('not_yet_valid');
      expect(reasonOf(ahead(MAX_ACCESS_TOKEN_TTL_SECONDS), opts)).toBe('not_yet_valid');
      // Checked after the signature: a forged token is bad_signature whatever it claims.
      expect(reasonOf(ahead(ACCESS_TOKEN_CLOCK_SKEW_SECONDS + 1), { ...opts, secret: OLD_SECRET })).toBe(
        'bad_signature',
      );
    });
  });

  describe('expired', () => {
    it('is valid up to the second before exp and expired from exp on', () => {
      expect(reasonOf(token, { ...opts, now: payload.exp - 1 })).toBe('valid');
      expect(reasonOf(token, { ...opts, now: payload.exp - 0.001 })).toBe('valid');
      expect(reasonOf(token, { ...opts, now: payload.exp })).toBe('expired');
      expect(reasonOf(token, { ...opts, now: payload.exp + 1 })).toBe('expired');
    });

    it('uses the current time by default', () => {
      const now = Math.floor(Date.now() / 1000);
      const live = signAccessToken({ ...payload, iat: now, exp: now + 60 }, SECRET);
      const dead = signAccessToken({ ...payload, iat: now - 120, exp: now - 60 }, SECRET);
      expect(reasonOf(live, { secret: SECRET, siteId: payload.site_id, anyPath: true })).toBe('valid');
      expect(reasonOf(dead, { secret: SECRET, siteId: payload.site_id, anyPath: true })).toBe('expired');
    });

    it('treats a NaN clock as expired, never as forever valid', () => {
      expect(reasonOf(token, { ...opts, now: NaN })).toBe('expired');
    });

    it('is checked before site and path', () => {
      expect(reasonOf(token, { secret: SECRET, siteId: 'other', url: '/elsewhere', now: payload.exp })).toBe('expired');
    });
  });

  describe('wrong_site and wrong_path', () => {
    it('rejects a token of another site', () => {
      expect(reasonOf(token, { ...opts, siteId: 'another-site' })).toBe('wrong_site');
      expect(reasonOf(token, { ...base, siteId: 'another-site', url: '/elsewhere' })).toBe('wrong_site');
    });

    it('rejects a token used for another path', () => {
      expect(reasonOf(token, { ...base, url: '/blog/b' })).toBe('wrong_path');
      expect(reasonOf(token, { ...base, url: '/blog/a/' })).toBe('wrong_path');
      expect(reasonOf(token, { ...base, url: '/blog' })).toBe('wrong_path');
      expect(reasonOf(token, { ...base, url: '/blog/a%2Fx' })).toBe('wrong_path');
      expect(reasonOf(token, { ...base, url: '/BLOG/A' })).toBe('wrong_path');
    });

    it('compares a path already spelled by requestPath() as is: a decoded "?" stays part of it', () => {
      const questionable = signAccessToken({ ...payload, url: '/blog/a?x' }, SECRET);
      expect(reasonOf(token, { ...base, path: '/blog/a' })).toBe('valid');
      expect(reasonOf(token, { ...base, path: '/blog/a?x' })).toBe('wrong_path');
      expect(reasonOf(questionable, { ...base, path: '/blog/a?x' })).toBe('valid');
      // The same text as a url is a URL: its query is dropped.
      expect(reasonOf(token, { ...base, url: '/blog/a?x' })).toBe('valid');
      expect(reasonOf(token, { ...base, path: '/blog/a/' })).toBe('wrong_path');
    });

    it('opens no page when none is named, or the url is not a string: a slip never opens every page', () => {
      expect(reasonOf(token, { ...opts })).toBe('valid'); // anyPath, said explicitly
      expect(reasonOf(token, { ...base } as never)).toBe('wrong_path');
      for (const url of [undefined, null, new URL('https://example.com/blog/a'), 42])
        expect(reasonOf(token, { ...base, url } as never)).toBe('wrong_path');
      expect(reasonOf(token, { ...base, url: '' })).toBe('wrong_path');
    });

    it('opens no target a router may read as another path than the token’s: dot segments, escaped slashes, ";"', () => {
      for (const url of ['/x/../blog/a', '/x/%2e%2e/blog/a', '/blog/x\\..\\a', '/blog%2Fa', '/blog/a;x', '/blog;x/a'])
        expect({ url, reason: reasonOf(token, { ...base, url }) }).toEqual({ url, reason: 'wrong_path' });
    });
  });
});

describe('peekAccessTokenPayload', () => {
  it('reads the payload without the secret, to find the key id', () => {
    expect(peekAccessTokenPayload(signAccessToken(payload, SECRET))?.kid).toBe('k1');
    expect(peekAccessTokenPayload(signAccessToken(payload, 'cgsec_unknown'))).toEqual(payload);
  });

  it('returns only the known fields', () => {
    expect(peekAccessTokenPayload(signRaw(JSON.stringify({ ...payload, scope: 'all' })))).toEqual(payload);
  });

  it('returns null for a malformed token', () => {
    expect(peekAccessTokenPayload('')).toBeNull();
    expect(peekAccessTokenPayload('a.b')).toBeNull();
    expect(peekAccessTokenPayload(signRaw('[]'))).toBeNull();
    expect(peekAccessTokenPayload(signAccessToken(payload, SECRET) + '.x')).toBeNull();
  });
});

describe('keyed HMAC state cache', () => {
  it('keeps verifying correctly past its bound, with more secrets than it holds', () => {
    const now = 1_800_000_000;
    const secrets = Array.from({ length: 150 }, (_, i) => `cgsec_bound_${i}`);
    const claims = { gate_id: 'g', site_id: 's', url: '/x', kid: 'k', iat: now, exp: now + 60 };
    for (const secret of secrets) {
      const token = signAccessToken(claims, secret);
      expect(verifyAccessToken(token, { secret, siteId: 's', now, anyPath: true }).valid).toBe(true);
      expect(verifyAccessToken(token, { secret: secret + 'x', siteId: 's', now, anyPath: true })).toEqual({
        valid: false,
        reason: 'bad_signature',
      });
    }
  });
});

describe('isAccessTokenShaped', () => {
  it('takes every token signed, whatever its payload, and reads nothing', () => {
    expect(isAccessTokenShaped(signAccessToken(payload, SECRET))).toBe(true);
    expect(isAccessTokenShaped(signAccessToken({ ...payload, url: `/${'é'.repeat(300)}` }, SECRET))).toBe(true);
    // Its form only: verifyAccessToken refuses it.
    expect(isAccessTokenShaped(signRaw('{"not":"a token"}'))).toBe(true);
  });

  it('refuses other bearer values: a JWT, a session id, a token with more or less than a MAC', () => {
    const token = signAccessToken(payload, SECRET);
    const [segment, mac] = token.split('.');
    expect(
      isAccessTokenShaped('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dQ'),
    ).toBe(false);
    expect(isAccessTokenShaped('some-session-id')).toBe(false);
    expect(isAccessTokenShaped(`${segment}.${mac}x`)).toBe(false);
    expect(isAccessTokenShaped(`${segment}.${mac.slice(1)}`)).toBe(false);
    expect(isAccessTokenShaped(`${segment}=.${mac}`)).toBe(false);
    expect(isAccessTokenShaped(`x${segment}.${mac}`)).toBe(false);
    expect(isAccessTokenShaped(`eyJ${'A'.repeat(4100)}.${mac}`)).toBe(false);
  });
});
