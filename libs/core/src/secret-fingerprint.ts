/*
 * What names an access-token secret in the open: GET /v1/site lists the fingerprints of the secrets
 * that verify now, so a running gate drops a secret the publisher revoked, or whose grace period
 * ended, without a redeploy. A MAC under the secret of a fixed label: it tells nothing of the secret.
 */

import { base64urlEncode } from './base64url';
import { hmacSha256 } from './hmac';

const FINGERPRINT_LABEL = 'crawlgate access-token secret fingerprint v1';
/** 128 bits: a collision between two of a site's secrets is out of reach. */
const FINGERPRINT_BYTES = 16;

export function secretFingerprint(secret: string): string {
  return base64urlEncode(hmacSha256(secret, FINGERPRINT_LABEL).subarray(0, FINGERPRINT_BYTES));
}
