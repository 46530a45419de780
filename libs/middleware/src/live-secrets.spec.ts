import { generateAccessTokenSecret, secretFingerprint, type SiteOffer } from '@crawlgate/core';
import { liveSecrets } from './live-secrets';

const [a, b, c] = [generateAccessTokenSecret(), generateAccessTokenSecret(), generateAccessTokenSecret()];
const listing = (...secrets: string[]) =>
  ({ secret_fingerprints: secrets.map(secretFingerprint) }) as Partial<SiteOffer> as SiteOffer;

let warnings: string[] = [];
const warn = (message: string) => warnings.push(message);
beforeEach(() => (warnings = []));

describe('liveSecrets', () => {
  it('uses every configured secret, signing with the first, until terms list some', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(undefined)).toEqual({ verifying: [a, b], signing: a });
    expect(live({} as SiteOffer)).toEqual({ verifying: [a, b], signing: a });
  });

  it('verifies with the configured secrets listed, in the API’s order, and signs with the first', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(listing(b, a))).toEqual({ verifying: [b, a], signing: b });
    expect(live(listing(b))).toEqual({ verifying: [b], signing: b });
    expect(warnings).toEqual([]);
  });

  it('signs with a secret in its grace period when the API’s current one is not configured', () => {
    const live = liveSecrets([a], warn);
    expect(live(listing(c, a))).toEqual({ verifying: [a], signing: a });
    expect(warnings).toEqual([]);
  });

  it('neither verifies nor signs when the API lists none of them: a revoked secret opens nothing', () => {
    const live = liveSecrets([a], warn);
    expect(live(listing(b))).toEqual({ verifying: [], signing: undefined });
    expect(warnings).toHaveLength(1);
    expect(live(listing())).toEqual({ verifying: [], signing: undefined });
    expect(warnings[0]).toMatch(/deploy the site's current secret/);
  });

  it('keeps the last list when later terms carry none: a revoked secret does not come back', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(listing(b))).toEqual({ verifying: [b], signing: b });
    expect(live({} as SiteOffer)).toEqual({ verifying: [b], signing: b });
    expect(live(undefined)).toEqual({ verifying: [b], signing: b });
  });

  it('judges a list again only when its content changed, and warns once per change', () => {
    const live = liveSecrets([a], warn);
    for (let refresh = 0; refresh < 10; refresh++) expect(live(listing(b)).signing).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(live(listing(a))).toEqual({ verifying: [a], signing: a });
    expect(live(listing(c)).signing).toBeUndefined();
    expect(warnings).toHaveLength(2);
  });
});
