import { signAccessToken } from '@crawlgate/core';
import type { AppConfig } from '../config/config';
import type { SiteSecret, SiteSecretsService } from '../sites/site-secrets.service';
import { AccessTokenService } from './access-token.service';

const SITE = { id: '6f1c2a3e-0000-4000-8000-000000000001', secretsVersion: 1 };
const CURRENT: SiteSecret = { kid: 'k1', secret: 'cgsec_current', retiresAt: null };

/** The service over a fixed list of secrets, as SiteSecretsService.usable() would answer it. */
const serviceWith = (usable: SiteSecret[]) =>
  new AccessTokenService(
    { usable: async () => usable } as unknown as SiteSecretsService,
    { accessTokenTtlSeconds: 1800 } as AppConfig,
  );

const tokenOf = (secret: SiteSecret) => {
  const iat = Math.floor(Date.now() / 1000);
  return signAccessToken(
    { gate_id: 'g', site_id: SITE.id, url: '/a', kid: secret.kid, iat, exp: iat + 1800 },
    secret.secret,
  );
};

describe('AccessTokenService.verify', () => {
  it('takes each secret for its own kid, and a retiring one only until it retires', async () => {
    const retiring: SiteSecret = { kid: 'k0', secret: 'cgsec_previous', retiresAt: new Date(Date.now() + 60_000) };
    const service = serviceWith([CURRENT, retiring]);
    expect((await service.verify(SITE, tokenOf(CURRENT), '/a')).valid).toBe(true);
    expect((await service.verify(SITE, tokenOf(retiring), '/a')).valid).toBe(true);
    // The previous secret under the current kid: no token the API signed.
    const misnamed = tokenOf({ ...retiring, kid: CURRENT.kid });
    expect(await service.verify(SITE, misnamed, '/a')).toEqual({ valid: false, reason: 'bad_signature' });
    // A secret listed with a retirement already past (read just before it retired) opens nothing.
    const retired = { ...retiring, retiresAt: new Date(Date.now() - 1000) };
    expect(await serviceWith([CURRENT, retired]).verify(SITE, tokenOf(retiring), '/a')).toEqual({
      valid: false,
      reason: 'bad_signature',
    });
  });
});
