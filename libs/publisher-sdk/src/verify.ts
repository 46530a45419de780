/*
 * Local access-token verification, without a call to the API: the one implementation in
 * @crawlgate/core, which the API signs with. `secret` may be a list during a secret rotation,
 * a previous secret given as { secret, kid, validUntil } so that it stops on time.
 *
 *   const check = verifyAccessToken(token, { siteId, secret, url: req.originalUrl });
 *   if (check.valid) serve(check.payload.gate_id); else deny(check.reason);
 */
export { verifyAccessToken } from '@crawlgate/core';
export type {
  AccessTokenKey,
  AccessTokenPayload,
  TokenCheck,
  TokenInvalidReason,
  VerifyAccessTokenOptions,
} from '@crawlgate/core';
