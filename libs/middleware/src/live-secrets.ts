/*
 * Which of the configured access-token secrets the gate may use now. The API lists the secrets
 * that verify (GET /v1/site), its current one first, each with when it retires: a secret the
 * publisher revoked stops opening pages at the next refresh of the terms, one whose grace period
 * ends stops when it ends, whatever the configuration still says. Terms that list none (an API
 * before the list) leave the first configured secret alone to count; before any terms loaded, the
 * gate verifies nothing (crawlgate.ts).
 */

import { secretFingerprint, SECRET_SETTLEMENT_MARGIN_SECONDS, type SiteOffer } from '@crawlgate/core';

export interface UsableSecrets {
  /** The configured secrets that verify now, in the API's order (its current one first). */
  verifying: readonly string[];
  /**
   * What gates are signed with: the first of them that still verifies once a payment made now has
   * settled. The API signs a payment's token with the secret that signed its gate, so a gate still
   * holding only the secret a rotation replaced sells pages through its grace period. Undefined
   * when there is none: the gate takes no payments, since their tokens could not open a page here.
   */
  signing:
    | {
        secret: string;
        /** Unix seconds after which no gate it signs may be paid; undefined: never. */ payableUntil?: number;
      }
    | undefined;
}

export type LiveSecrets = (offer: SiteOffer | undefined, nowMs?: number) => UsableSecrets;

/** The least time a gate is offered for: one its secret would let live less is not offered. */
const MIN_PAYABLE_SECONDS = 30;

interface Listed {
  secret: string;
  /** Milliseconds; undefined for the current secret. */
  retiresAt: number | undefined;
}

/** `warn` hears once each time the API's list changes to one that leaves the gate nothing to sign with. */
export function liveSecrets(configured: readonly string[], warn: (message: string) => void): LiveSecrets {
  const byFingerprint = new Map(configured.map((secret) => [secretFingerprint(secret), secret]));
  // Until the API has listed what verifies, only the first configured secret, the one gates are
  // signed with: a revoked one left in the configuration beside it opens nothing meanwhile.
  const unlisted: UsableSecrets = { verifying: [configured[0]], signing: { secret: configured[0] } };
  let listed: Listed[] | undefined;
  // Each refresh brings a new array: the list is read again only when its content changed.
  let readFor: SiteOffer['usable_secrets'];
  let readText: string | undefined;
  let warnedFor: string | undefined;

  function read(offer: SiteOffer | undefined): Listed[] | undefined {
    const usable = offer?.usable_secrets;
    // Terms without a list (an API that lists none) leave the last list in force, once one was read.
    if (!usable || usable === readFor) return listed;
    readFor = usable;
    const text = JSON.stringify(usable);
    if (text === readText) return listed;
    readText = text;
    const found = new Map<string, Listed>();
    for (const { fingerprint, retires_at } of usable) {
      const secret = byFingerprint.get(fingerprint);
      // Each configured secret once, as the API lists it first.
      if (secret !== undefined && !found.has(secret))
        found.set(secret, { secret, retiresAt: retires_at === null ? undefined : Date.parse(retires_at) });
    }
    listed = [...found.values()];
    return listed;
  }

  // What the list gives until the next instant it changes (a secret retiring, or ceasing to outlast a payment).
  let answered: UsableSecrets = unlisted;
  let answeredFor: SiteOffer | undefined;
  let answeredUntil = 0;

  return (offer, nowMs = Date.now()) => {
    if (offer === answeredFor && nowMs < answeredUntil) return answered;
    const secrets = read(offer);
    if (!secrets) return unlisted;
    // A gate must be paid, and its payment settled, while its secret still verifies; and be payable a while.
    const settling = ((offer?.settlement_timeout_seconds ?? 0) + SECRET_SETTLEMENT_MARGIN_SECONDS) * 1000;
    const signable = settling + MIN_PAYABLE_SECONDS * 1000;
    const live = secrets.filter((one) => one.retiresAt === undefined || one.retiresAt > nowMs);
    const signer = live.find((one) => one.retiresAt === undefined || one.retiresAt - signable > nowMs);
    if (!signer && warnedFor !== readText) {
      warnedFor = readText;
      warn(
        "none of the configured access-token secrets verifies long enough to take a payment (revoked, or its grace period ending): deploy the site's current secret; until then bots that must pay are answered 503, and no token opens a page once its secret has retired",
      );
    }
    let until = Infinity;
    for (const one of live)
      if (one.retiresAt !== undefined)
        for (const at of [one.retiresAt - signable, one.retiresAt]) if (at > nowMs && at < until) until = at;
    answered = {
      verifying: live.map((one) => one.secret),
      signing: signer && {
        secret: signer.secret,
        payableUntil: signer.retiresAt === undefined ? undefined : Math.floor((signer.retiresAt - settling) / 1000),
      },
    };
    answeredFor = offer;
    answeredUntil = until;
    return answered;
  };
}
