import { generateAccessTokenSecret, secretFingerprint, type SiteOffer } from '@crawlgate/core';
import { liveSecrets } from './live-secrets';

const [a, b, c] = [generateAccessTokenSecret(), generateAccessTokenSecret(), generateAccessTokenSecret()];
const NOW = Date.parse('2026-11-28T04:00:00Z');
/** Terms listing `secrets` (each a secret, or a secret and when it retires), with a 30 s settlement timeout. */
const listing = (...secrets: (string | [string, number])[]) =>
  ({
    settlement_timeout_seconds: 30,
    usable_secrets: secrets.map((one) =>
      typeof one === 'string'
        ? { fingerprint: secretFingerprint(one), retires_at: null }
        : { fingerprint: secretFingerprint(one[0]), retires_at: new Date(one[1]).toISOString() },
    ),
  }) as Partial<SiteOffer> as SiteOffer;

let warnings: string[] = [];
const warn = (message: string) => warnings.push(message);
beforeEach(() => (warnings = []));

describe('liveSecrets', () => {
  it('uses only the first configured secret until terms list some: one revoked beside it opens nothing meanwhile', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(undefined, NOW)).toEqual({ verifying: [a], signing: { secret: a } });
    expect(live({} as SiteOffer, NOW)).toEqual({ verifying: [a], signing: { secret: a } });
    expect(live(listing([b, NOW + 600_000], a), NOW)).toEqual({
      verifying: [b, a],
      signing: { secret: b, payableUntil: (NOW + 510_000) / 1000 },
    });
  });

  it('verifies with the configured secrets listed, in the API’s order, and signs with the first', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(listing(b, [a, NOW + 600_000]), NOW)).toEqual({ verifying: [b, a], signing: { secret: b } });
    expect(live(listing(b), NOW)).toEqual({ verifying: [b], signing: { secret: b } });
    expect(warnings).toEqual([]);
  });

  it('signs with a secret in its grace period when the current one is not configured, its gates payable until 90 s before it retires', () => {
    const live = liveSecrets([a], warn);
    const retires = NOW + 600_000;
    expect(live(listing(c, [a, retires]), NOW)).toEqual({
      verifying: [a],
      signing: { secret: a, payableUntil: Math.floor((retires - 90_000) / 1000) },
    });
    expect(warnings).toEqual([]);
  });

  it('signs nothing once a gate could not stay payable 30 s, and verifies nothing with the secret once it retired', () => {
    const live = liveSecrets([a], warn);
    const terms = listing(c, [a, NOW + 600_000]);
    expect(live(terms, NOW + 479_000).signing).toEqual({ secret: a, payableUntil: (NOW + 510_000) / 1000 });
    expect(live(terms, NOW + 481_000)).toEqual({ verifying: [a], signing: undefined });
    expect(warnings).toHaveLength(1);
    expect(live(terms, NOW + 600_001)).toEqual({ verifying: [], signing: undefined });
    expect(warnings).toHaveLength(1);
  });

  it('neither verifies nor signs when the API lists none of them: a revoked secret opens nothing', () => {
    const live = liveSecrets([a], warn);
    expect(live(listing(b), NOW)).toEqual({ verifying: [], signing: undefined });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/deploy the site's current secret/);
    expect(live(listing(), NOW)).toEqual({ verifying: [], signing: undefined });
  });

  it('keeps the last list when later terms carry none: a revoked secret does not come back', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(listing(b), NOW)).toEqual({ verifying: [b], signing: { secret: b } });
    expect(live({} as SiteOffer, NOW)).toEqual({ verifying: [b], signing: { secret: b } });
    expect(live(undefined, NOW)).toEqual({ verifying: [b], signing: { secret: b } });
  });

  it('reads each configured secret once, however long or repetitive the list', () => {
    const live = liveSecrets([a], warn);
    const entry = { fingerprint: secretFingerprint(a), retires_at: new Date(NOW + 600_000).toISOString() };
    const terms = { settlement_timeout_seconds: 30, usable_secrets: Array.from({ length: 200_000 }, () => entry) };
    expect(live(terms as Partial<SiteOffer> as SiteOffer, NOW)).toEqual({
      verifying: [a],
      signing: { secret: a, payableUntil: (NOW + 510_000) / 1000 },
    });
    expect(live(terms as Partial<SiteOffer> as SiteOffer, NOW + 600_001).verifying).toEqual([]);
  });

  it('warns once per list, however often the same list comes back', () => {
    const live = liveSecrets([a], warn);
    for (let refresh = 0; refresh < 10; refresh++) expect(live(listing(b), NOW).signing).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(live(listing(a), NOW)).toEqual({ verifying: [a], signing: { secret: a } });
    expect(live(listing(c), NOW).signing).toBeUndefined();
    expect(warnings).toHaveLength(2);
  });
});
