import { createHmac } from 'node:crypto';
import { generateAccessTokenSecret } from './keys';
import { secretFingerprint } from './secret-fingerprint';

describe('secretFingerprint', () => {
  it('is the first 16 bytes of an HMAC under the secret, in base64url', () => {
    const secret = generateAccessTokenSecret();
    const expected = createHmac('sha256', secret)
      .update('crawlgate access-token secret fingerprint v1')
      .digest()
      .subarray(0, 16)
      .toString('base64url');
    expect(secretFingerprint(secret)).toBe(expected);
    expect(secretFingerprint(secret)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('differs between secrets and does not contain the secret', () => {
    const secrets = Array.from({ length: 50 }, generateAccessTokenSecret);
    const fingerprints = new Set(secrets.map(secretFingerprint));
    expect(fingerprints.size).toBe(50);
    for (const secret of secrets) expect(secret).not.toContain(secretFingerprint(secret));
  });
});
