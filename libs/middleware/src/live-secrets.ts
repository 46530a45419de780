/*
 * Which of the configured access-token secrets the gate may use now. The API lists the fingerprints
 * of the secrets that verify (GET /v1/site), its current one first: a secret the publisher revoked,
 * or whose grace period ended, stops opening pages at the next refresh of the terms, whatever the
 * configuration still says. Until terms that list them have loaded, every configured secret counts.
 */

import { secretFingerprint, type SiteOffer } from '@crawlgate/core';

export interface UsableSecrets {
  /** The configured secrets that verify now, in the API's order (its current one first). */
  verifying: readonly string[];
  /**
   * What gates are signed with: the first of them. The API signs a payment's token with the secret
   * that signed its gate while that one verifies, so a gate still holding only the secret a
   * rotation replaced sells pages through its grace period. Undefined when none verifies: the gate
   * takes no payments, since their tokens could not open a page here.
   */
  signing: string | undefined;
}

export type LiveSecrets = (offer: SiteOffer | undefined) => UsableSecrets;

/** `warn` hears once each time the API's list changes to one that leaves the gate unable to sign. */
export function liveSecrets(configured: readonly string[], warn: (message: string) => void): LiveSecrets {
  const byFingerprint = new Map(configured.map((secret) => [secretFingerprint(secret), secret]));
  let current: UsableSecrets = { verifying: configured, signing: configured[0] };
  // Each refresh brings a new array: the list is judged again only when its content changed.
  let readFor: readonly string[] | undefined;
  let readText: string | undefined;
  return (offer) => {
    const listed = offer?.secret_fingerprints;
    // Terms without a list (an API that lists none) leave the last list in force, once one was read.
    if (!listed || listed === readFor) return current;
    readFor = listed;
    const text = listed.join(',');
    if (text === readText) return current;
    readText = text;
    const verifying = listed.flatMap((fingerprint) => byFingerprint.get(fingerprint) ?? []);
    current = { verifying, signing: verifying[0] };
    if (!current.signing)
      warn(
        "none of the configured access-token secrets verifies any more (revoked, or its grace period over): deploy the site's current secret; until then no token opens a page here and bots that must pay are answered 503",
      );
    return current;
  };
}
