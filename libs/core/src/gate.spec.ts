import { signAccessToken, verifyAccessToken } from './access-token';
import { base64urlDecode, base64urlEncode, utf8Decode, utf8Encode } from './base64url';
import {
  gateRefBindsTarget,
  MAX_GATE_ID_LENGTH,
  newGateRef,
  newTargetBoundGateRef,
  readGate,
  signGate,
  verifyGate,
  type GateTerms,
} from './gate';
import { buildGateOffer, paymentRequiredHeader } from './gate-offer';
import { decodeBase64Json } from './base64url';

const SECRET = 'cgsec_' + 'a'.repeat(43);
const OTHER = 'cgsec_' + 'b'.repeat(43);
const NOW = 1_800_000_000;
const terms = (overrides: Partial<GateTerms> = {}): GateTerms => ({
  siteId: '11111111-1111-4111-8111-111111111111',
  ref: '22222222-2222-4222-8222-222222222222',
  path: '/premium/a',
  micros: 500_000n,
  chainId: 31337,
  asset: '0x00000000000000000000000000000000000000aa',
  payTo: '0x00000000000000000000000000000000000000bb',
  iat: NOW,
  exp: NOW + 900,
  ...overrides,
});

/** Re-signs nothing: swaps the payload segment of a signed id, keeping its MAC. */
function withPayload(id: string, edit: (payload: unknown[]) => unknown[]): string {
  const [, segment, mac] = id.split('.');
  const payload = JSON.parse(utf8Decode(base64urlDecode(segment)!)!) as unknown[];
  return `g1.${base64urlEncode(utf8Encode(JSON.stringify(edit(payload))))}.${mac}`;
}

describe('gates', () => {
  it('round-trips its terms and verifies with the secret that signed it, or any of a rotation', () => {
    const id = signGate(terms(), SECRET);
    expect(id.startsWith('g1.')).toBe(true);
    expect(readGate(id)).toEqual(terms());
    expect(verifyGate(id, { secret: SECRET, now: NOW })).toEqual({ valid: true, gate: terms() });
    expect(verifyGate(id, { secret: [OTHER, SECRET], siteId: terms().siteId, now: NOW }).valid).toBe(true);
  });

  it('refuses another secret, another site, and an expired gate', () => {
    const id = signGate(terms(), SECRET);
    expect(verifyGate(id, { secret: OTHER, now: NOW })).toEqual({ valid: false, reason: 'bad_signature' });
    expect(verifyGate(id, { secret: [''], now: NOW })).toEqual({ valid: false, reason: 'bad_signature' });
    expect(verifyGate(id, { secret: SECRET, siteId: '33333333-3333-4333-8333-333333333333', now: NOW })).toEqual({
      valid: false,
      reason: 'wrong_site',
    });
    expect(verifyGate(id, { secret: SECRET, now: NOW + 900 })).toEqual({ valid: false, reason: 'expired' });
    expect(verifyGate(id, { secret: SECRET, now: Number.NaN })).toEqual({ valid: false, reason: 'expired' });
  });

  it.each([
    ['the path', (p: unknown[]) => ((p[3] = '/premium/b'), p)],
    ['the price', (p: unknown[]) => ((p[4] = '1'), p)],
    ['the pay-to', (p: unknown[]) => ((p[7] = '0x00000000000000000000000000000000000000cc'), p)],
    ['the expiry', (p: unknown[]) => ((p[9] = NOW + 10 ** 6), p)],
    ['the site', (p: unknown[]) => ((p[1] = '33333333-3333-4333-8333-333333333333'), p)],
  ])('refuses a gate whose %s was changed', (_name, edit) => {
    const id = signGate(terms(), SECRET);
    expect(verifyGate(withPayload(id, edit), { secret: SECRET, now: NOW })).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
  });

  it('is never confused with an access token, either way', () => {
    const token = signAccessToken(
      { gate_id: terms().ref, site_id: terms().siteId, url: '/premium/a', kid: 'k', iat: NOW, exp: NOW + 60 },
      SECRET,
    );
    expect(verifyGate(`g1.${token}`, { secret: SECRET, now: NOW })).toEqual({ valid: false, reason: 'malformed' });
    const id = signGate(terms(), SECRET);
    expect(
      verifyAccessToken(id.slice(3), { secret: SECRET, siteId: terms().siteId, now: NOW, anyPath: true }).valid,
    ).toBe(false);
  });

  it.each([
    [''],
    ['g1.'],
    ['g1.a.b'],
    ['g2.' + 'a'.repeat(10) + '.' + 'b'.repeat(43)],
    [42],
    [null],
    ['g1.' + 'a'.repeat(MAX_GATE_ID_LENGTH)],
  ])('calls %p malformed', (id) => {
    expect(readGate(id)).toBeNull();
    expect(verifyGate(id as string, { secret: SECRET, now: NOW })).toEqual({ valid: false, reason: 'malformed' });
  });

  it('refuses to sign terms it could not read back', () => {
    expect(() => signGate(terms({ micros: 0n }), SECRET)).toThrow(TypeError);
    expect(() => signGate(terms({ micros: 1_000_001n }), SECRET)).toThrow(TypeError);
    expect(() => signGate(terms({ path: 'premium' }), SECRET)).toThrow(TypeError);
    expect(() => signGate(terms({ ref: 'not-a-uuid' }), SECRET)).toThrow(TypeError);
    expect(() => signGate(terms(), '')).toThrow(TypeError);
  });

  it('fits the longest URL the API takes, even of escaped control characters', () => {
    // Each escape is 3 characters of the URL ("%01") and 6 of JSON ("\u0001").
    const path = '/' + '\u0001'.repeat(Math.floor(2047 / 3));
    const id = signGate(terms({ path }), SECRET);
    expect(id.length).toBeLessThanOrEqual(MAX_GATE_ID_LENGTH);
    expect(readGate(id)?.path).toBe(path);
  });

  it('makes a fresh random ref each time', () => {
    const refs = new Set(Array.from({ length: 100 }, newGateRef));
    expect(refs.size).toBe(100);
    for (const ref of refs) expect(ref).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('gate offers', () => {
  const paymentTerms = {
    network: 'local',
    x402Network: 'local',
    caip2: 'eip155:31337',
    assetName: 'USD Coin',
    assetVersion: '2',
  };

  it('carries the gate id in x402 v1 and v2 requirements, on the site’s own domain', () => {
    const id = signGate(terms(), SECRET);
    const offer = buildGateOffer(id, terms(), paymentTerms, {
      domain: 'example.com',
      apiBaseUrl: 'https://api.test',
      pathAndQuery: '/premium/a?x=1',
      now: NOW,
    });
    expect(offer).toMatchObject({
      id,
      ref: terms().ref,
      url: '/premium/a',
      status: 'open',
      price_usd: '0.5',
      amount: '500000',
      expires_at: new Date((NOW + 900) * 1000).toISOString(),
      verify_url: `https://api.test/v1/gates/${id}/verify`,
    });
    expect(offer.accepts[0]).toMatchObject({
      resource: 'https://example.com/premium/a?x=1',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2', gate_id: id },
    });
    const v2 = decodeBase64Json(paymentRequiredHeader(offer, 'eip155:31337')) as {
      accepts: { extra: unknown; network: string }[];
    };
    expect(v2.accepts[0]).toMatchObject({ network: 'eip155:31337', extra: { gate_id: id } });
  });

  it('never lets an authorization outlive the gate', () => {
    const offer = buildGateOffer('g', terms(), paymentTerms, {
      domain: 'example.com',
      apiBaseUrl: 'https://api.test',
      now: NOW + 880,
    });
    expect(offer.accepts[0].maxTimeoutSeconds).toBe(20);
  });
});

describe('target-bound gate refs', () => {
  const target = JSON.stringify(['/articles/hello%20world;jsessionid=abc', null]);

  it('read as UUID v4 refs, each new', () => {
    const refs = Array.from({ length: 50 }, () => newTargetBoundGateRef('s1', target));
    for (const ref of refs)
      expect(ref).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(refs).size).toBe(50);
  });

  it('bind the target they were made for, under the secret that made them, and no other', () => {
    const ref = newTargetBoundGateRef('s1', target);
    expect(gateRefBindsTarget(ref, ['s0', 's1'], target)).toBe(true);
    expect(gateRefBindsTarget(ref, ['s0'], target)).toBe(false);
    expect(gateRefBindsTarget(ref, [], target)).toBe(false);
    for (const other of [
      JSON.stringify(['/articles/other;/../hello%20world;jsessionid=abc', null]),
      JSON.stringify(['/articles/hello%20world;jsessionid=abc', '/hello%20world;jsessionid=abc']),
      target + ' ',
    ])
      expect(gateRefBindsTarget(ref, ['s1'], other)).toBe(false);
    // A random ref binds nothing.
    expect(gateRefBindsTarget(newGateRef(), ['s1'], target)).toBe(false);
    expect(gateRefBindsTarget('not a ref', ['s1'], target)).toBe(false);
  });
});
