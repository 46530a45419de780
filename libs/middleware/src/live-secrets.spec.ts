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

  it('verifies with the configured secrets listed, and signs with the API’s current one', () => {
    const live = liveSecrets([a, b], warn);
    expect(live(listing(b, a))).toEqual({ verifying: [b, a], signing: b });
    expect(live(listing(b))).toEqual({ verifying: [b], signing: b });
    expect(warnings).toEqual([]);
  });

  it('does not sign when the API’s current secret is not configured, but still verifies those in their grace period', () => {
    const live = liveSecrets([a], warn);
    expect(live(listing(c, a))).toEqual({ verifying: [a], signing: undefined });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/current access-token secret is not configured/);
  });

  it('neither verifies nor signs when the API lists none of them: a revoked secret opens nothing', () => {
    const live = liveSecrets([a], warn);
    expect(live(listing(b))).toEqual({ verifying: [], signing: undefined });
    expect(live(listing())).toEqual({ verifying: [], signing: undefined });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/deploy the site's current secret/);
  });

  it('reads each new list, and a list once', () => {
    const live = liveSecrets([a, b], warn);
    const first = listing(c, b);
    expect(live(first)).toBe(live(first));
    expect(warnings).toHaveLength(1);
    expect(live(listing(a))).toEqual({ verifying: [a], signing: a });
    expect(live(first)).toEqual({ verifying: [b], signing: undefined });
  });
});
