import { Inject, Injectable } from '@nestjs/common';
import { signAccessToken, verifyAccessToken, type TokenCheck } from '@crawlgate/core';
import type { AppConfig } from '../config/config';
import { CONFIG } from '../db/tokens';
import { SiteSecretsService, type SiteSecret } from '../sites/site-secrets.service';

export interface IssuedToken {
  token: string;
  kid: string;
  issuedAt: Date;
  expiresAt: Date;
  /** When the secret that signed it stops verifying (which ends the token too); null for the current one. */
  secretRetiresAt: Date | null;
}

export interface TokenGrant {
  gateId: string;
  siteId: string;
  url: string;
  /** The site's secrets_version, when the caller read the site row: spares reading it again. */
  secretsVersion?: number;
  /** The secret to sign with while it verifies (the one that signed the gate paid); the current one otherwise. */
  kid?: string;
}

/**
 * Signs access tokens with the secret that signed the gate paid while it verifies, else the site's
 * current one, and checks them against its usable ones.
 */
@Injectable()
export class AccessTokenService {
  constructor(
    private readonly secrets: SiteSecretsService,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async issue(grant: TokenGrant, now = Date.now()): Promise<IssuedToken> {
    const iat = Math.floor(now / 1000);
    return this.sign(grant, iat, iat + this.config.accessTokenTtlSeconds);
  }

  /**
   * The token a settled payment was given, rebuilt from what was stored: a repeated verify gets
   * the same token (same kid, iat and exp), never a longer-lived one.
   */
  async reissue(grant: TokenGrant, kid: string, issuedAt: Date, expiresAt: Date): Promise<IssuedToken> {
    const iat = Math.floor(issuedAt.getTime() / 1000);
    const exp = Math.floor(expiresAt.getTime() / 1000);
    const usable = await this.secrets.usable(grant.siteId, grant.secretsVersion);
    const original = usable.find((secret) => secret.kid === kid);
    return original ? this.signWith(grant, original, iat, exp) : this.sign(grant, iat, exp);
  }

  /** Verifies for the site that owns the site token; `url` additionally checks the path binding. */
  async verify(site: { id: string; secretsVersion: number }, token: string, url?: string): Promise<TokenCheck> {
    // Each secret vouches only for tokens naming its kid, and only until it retires.
    const keys = (await this.secrets.usable(site.id, site.secretsVersion)).map(({ secret, kid, retiresAt }) => ({
      secret,
      kid,
      ...(retiresAt && { validUntil: retiresAt }),
    }));
    const page = url === undefined ? { anyPath: true as const } : { url };
    return verifyAccessToken(token, { secret: keys, siteId: site.id, ...page });
  }

  private async sign(grant: TokenGrant, iat: number, exp: number): Promise<IssuedToken> {
    const asked =
      grant.kid === undefined
        ? undefined
        : (await this.secrets.usable(grant.siteId, grant.secretsVersion)).find((secret) => secret.kid === grant.kid);
    return this.signWith(grant, asked ?? (await this.secrets.current(grant.siteId, grant.secretsVersion)), iat, exp);
  }

  /** A token signed with a retiring secret ends when the secret does: its expires_at is what it is worth. */
  private signWith(grant: TokenGrant, secret: SiteSecret, iat: number, until: number): IssuedToken {
    const exp = secret.retiresAt ? Math.min(until, Math.floor(secret.retiresAt.getTime() / 1000)) : until;
    const token = signAccessToken(
      { gate_id: grant.gateId, site_id: grant.siteId, url: grant.url, kid: secret.kid, iat, exp },
      secret.secret,
    );
    return {
      token,
      kid: secret.kid,
      issuedAt: new Date(iat * 1000),
      expiresAt: new Date(exp * 1000),
      secretRetiresAt: secret.retiresAt,
    };
  }
}
