/*
 * Which of the configured access-token secrets the gate may use now. The API lists the fingerprints
 * of the secrets that verify (GET /v1/site), its current one first: a secret the publisher revoked,
 * or whose grace period ended, stops opening pages at the next refresh of the terms, whatever the
 * configuration still says. Until terms that list them have loaded, every configured secret counts.
 */

import { secretFingerprint, type SiteOffer } from '@crawlgate/core';

export interface UsableSecrets {
  /** The configured secrets that verify now. */
  verifying: readonly string[];
  /**
   * The API's current secret, which gates are signed with; undefined when the gate does not hold
   * it. The API signs every new token with it, so a gate without it would take payments whose
   * tokens it cannot open: it takes none.
   */
  signing: string | undefined;
}

export type LiveSecrets = (offer: SiteOffer | undefined) => UsableSecrets;

/** `warn` hears once per list of the API's under which the gate cannot sign. */
export function liveSecrets(configured: readonly string[], warn: (message: string) => void): LiveSecrets {
  const byFingerprint = new Map(configured.map((secret) => [secretFingerprint(secret), secret]));
  const unlisted: UsableSecrets = { verifying: configured, signing: configured[0] };
  // Terms are replaced, never changed in place, on each refresh: one reading per list.
  let readFor: readonly string[] | undefined;
  let read = unlisted;
  return (offer) => {
    const listed = offer?.secret_fingerprints;
    if (!listed) return unlisted;
    if (listed !== readFor) {
      const verifying = listed.flatMap((fingerprint) => byFingerprint.get(fingerprint) ?? []);
      read = { verifying, signing: listed.length > 0 ? byFingerprint.get(listed[0]) : undefined };
      readFor = listed;
      if (!read.signing)
        warn(
          verifying.length === 0
            ? "none of the configured access-token secrets verifies any more (revoked, or its grace period over): deploy the site's current secret; until then no token opens a page here and bots that must pay are answered 503"
            : "the site's current access-token secret is not configured (it was rotated): deploy it; until then tokens signed before the rotation still open pages, and bots that must pay are answered 503",
        );
    }
    return read;
  };
}
