import * as core from '@crawlgate/core';
import { signAccessToken } from '@crawlgate/core';
import { verifyAccessToken, type SecretRotation } from './index';

describe('verifyAccessToken (local, no API call)', () => {
  const siteId = '3b0f6c1e-7d2a-4c1b-9e8f-0a1b2c3d4e5f';
  const secret = 'cgsec_current';
  const now = Math.floor(Date.now() / 1000);
  const payload = { gate_id: 'gate-1', site_id: siteId, url: '/articles/42', kid: 'k2', iat: now, exp: now + 1800 };
  const token = signAccessToken(payload, secret);

  it('is core’s implementation, not a copy', () => {
    expect(verifyAccessToken).toBe(core.verifyAccessToken);
  });

  it('accepts a token of the site, for its paid path', () => {
    expect(verifyAccessToken(token, { siteId, secret, url: '/articles/42?utm=x' })).toEqual({ valid: true, payload });
    expect(verifyAccessToken(token, { siteId, secret, anyPath: true })).toEqual({ valid: true, payload });
  });

  it('accepts any secret of a rotation list', () => {
    expect(verifyAccessToken(token, { siteId, secret: ['cgsec_next', secret], anyPath: true }).valid).toBe(true);
  });

  it('bounds a previous secret by what a rotation answered, as the README shows', () => {
    const rotation: SecretRotation = {
      site_id: siteId,
      access_token_secret: 'cgsec_next',
      kid: 'k3',
      previous_kids: ['k2'],
      previous_valid_until: new Date((now + 600) * 1000).toISOString(),
    };
    const previous = { secret, kid: rotation.previous_kids[0], validUntil: rotation.previous_valid_until };
    const options = { siteId, secret: [rotation.access_token_secret, previous], anyPath: true as const };
    expect(verifyAccessToken(token, { ...options, now: now + 599 }).valid).toBe(true);
    expect(verifyAccessToken(token, { ...options, now: now + 600 })).toEqual({ valid: false, reason: 'bad_signature' });
    // A revoke answers null: the previous secret verifies nothing.
    const revoked = { ...previous, validUntil: null };
    expect(verifyAccessToken(token, { ...options, secret: [rotation.access_token_secret, revoked] }).valid).toBe(false);
  });

  it('rejects another path, another site, another secret, and a tampered token', () => {
    expect(verifyAccessToken(token, { siteId, secret, url: '/articles/43' })).toEqual({
      valid: false,
      reason: 'wrong_path',
    });
    expect(verifyAccessToken(token, { siteId: 'another-site', secret, anyPath: true })).toEqual({
      valid: false,
      reason: 'wrong_site',
    });
    expect(verifyAccessToken(token, { siteId, secret: 'cgsec_other', anyPath: true })).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
    expect(verifyAccessToken(`${token}x`, { siteId, secret, anyPath: true })).toMatchObject({ valid: false });
    expect(verifyAccessToken('not a token', { siteId, secret, anyPath: true })).toEqual({
      valid: false,
      reason: 'malformed',
    });
  });

  it('rejects an expired token', () => {
    const expired = signAccessToken({ ...payload, iat: now - 3600, exp: now - 1 }, secret);
    expect(verifyAccessToken(expired, { siteId, secret, anyPath: true })).toEqual({ valid: false, reason: 'expired' });
    expect(verifyAccessToken(token, { siteId, secret, now: payload.exp, anyPath: true })).toEqual({
      valid: false,
      reason: 'expired',
    });
  });
});
