import { Inject, Injectable } from '@nestjs/common';
import {
  formatMicrosUsd,
  generateSiteToken,
  sha256Hex,
  type CreatedSite,
  type RotatedSiteToken,
  type SecretRotation,
  type Site as SiteBody,
} from '@crawlgate/core';
import type { ChainContext } from '../chain/chain-context';
import { CHAIN } from '../chain/tokens';
import type { AppConfig } from '../config/config';
import type { Database } from '../db/database';
import { isUniqueViolation } from '../db/prisma-errors';
import { CONFIG, DATABASE } from '../db/tokens';
import type { Publisher, Site } from '../generated/prisma/client';
import { conflict, notFound } from '../http/api-error';
import { isUuid } from '../http/ids';
import { ValidationFailed } from '../http/validation-items';
import { SiteSecretsService } from './site-secrets.service';
import type { CreateSiteDto, UpdateSiteDto } from './sites.dto';

const DOMAIN_TAKEN = 'You already have a site with this domain';

@Injectable()
export class SitesService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(CHAIN) private readonly chain: ChainContext,
    private readonly secrets: SiteSecretsService,
  ) {}

  async create(publisher: Publisher, input: CreateSiteDto): Promise<CreatedSite> {
    const siteToken = generateSiteToken();
    try {
      return await this.db.prisma.$transaction(async (tx) => {
        // The publisher's row, locked: its site creations run one at a time, so sites created at
        // once never pass the cap together.
        await tx.$queryRaw`SELECT id FROM publishers WHERE id = ${publisher.id}::uuid FOR UPDATE`;
        const held = await tx.site.count({ where: { publisherId: publisher.id } });
        if (held >= this.config.maxSitesPerPublisher)
          throw conflict(`You have ${held} sites, the most one account holds; delete one to add another`);
        const site = await tx.site.create({
          data: {
            publisherId: publisher.id,
            domain: input.domain,
            name: input.name ?? null,
            siteTokenHash: sha256Hex(siteToken),
          },
        });
        const { kid, secret } = await this.secrets.create(tx, site.id);
        return { ...siteView(site, 0), site_token: siteToken, access_token_secret: secret, kid };
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(DOMAIN_TAKEN);
      throw error;
    }
  }

  async list(publisher: Publisher): Promise<SiteBody[]> {
    const sites = await this.db.prisma.site.findMany({
      where: { publisherId: publisher.id },
      orderBy: { createdAt: 'asc' },
      include: { _count: { select: { rules: true } } },
    });
    return sites.map((site) => siteView(site, site._count.rules));
  }

  /** The publisher's own site; anyone else's is reported exactly like a missing one. */
  async owned(publisher: Publisher, siteId: string): Promise<Site> {
    const site = isUuid(siteId) ? await this.db.prisma.site.findUnique({ where: { id: siteId } }) : null;
    if (!site || site.publisherId !== publisher.id) throw notFound('Site not found');
    return site;
  }

  async get(publisher: Publisher, siteId: string): Promise<SiteBody> {
    const site = await this.owned(publisher, siteId);
    return siteView(site, await this.db.prisma.priceRule.count({ where: { siteId: site.id } }));
  }

  async update(publisher: Publisher, siteId: string, input: UpdateSiteDto): Promise<SiteBody> {
    const site = await this.owned(publisher, siteId);
    if (input.batch_settlement === true && !this.chain.batchSettlement) {
      throw conflict(
        'This API cannot take batch-settlement vouchers: it has no claim authorizer (CLAIM_AUTHORIZER_PRIVATE_KEY)',
      );
    }
    try {
      const updated = await this.db.prisma.site.update({
        where: { id: site.id },
        data: {
          ...(input.domain !== undefined ? { domain: input.domain } : {}),
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.batch_settlement !== undefined ? { batchSettlement: input.batch_settlement } : {}),
        },
      });
      return siteView(updated, await this.db.prisma.priceRule.count({ where: { siteId: site.id } }));
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(DOMAIN_TAKEN);
      throw error;
    }
  }

  async remove(publisher: Publisher, siteId: string): Promise<{ site_id: string; deleted: true }> {
    const site = await this.owned(publisher, siteId);
    await this.db.prisma.site.delete({ where: { id: site.id } });
    return { site_id: site.id, deleted: true };
  }

  async rotateSiteToken(publisher: Publisher, siteId: string): Promise<RotatedSiteToken> {
    const site = await this.owned(publisher, siteId);
    const siteToken = generateSiteToken();
    await this.db.prisma.site.update({ where: { id: site.id }, data: { siteTokenHash: sha256Hex(siteToken) } });
    return { site_id: site.id, site_token: siteToken };
  }

  async rotateSecret(
    publisher: Publisher,
    siteId: string,
    graceSeconds = this.config.secretGraceSeconds,
  ): Promise<SecretRotation> {
    if (graceSeconds > this.config.secretGraceSeconds) {
      const max = this.config.secretGraceSeconds;
      throw new ValidationFailed([
        {
          loc: ['body', 'grace_seconds'],
          msg: `grace_seconds must not be greater than ${max} (SECRET_GRACE_SECONDS)`,
          type: 'less_than_equal',
          input: graceSeconds,
          ctx: { le: max },
        },
      ]);
    }
    const site = await this.owned(publisher, siteId);
    const rotated = await this.secrets.rotate(site.id, graceSeconds);
    return {
      site_id: site.id,
      access_token_secret: rotated.secret,
      kid: rotated.kid,
      previous_kids: rotated.previousKids,
      previous_valid_until: rotated.previousValidUntil?.toISOString() ?? null,
    };
  }
}

/** A site as the API shows it to its publisher. */
export function siteView(site: Site, rulesCount: number): SiteBody {
  return {
    site_id: site.id,
    domain: site.domain,
    name: site.name,
    default_price_usd: formatMicrosUsd(site.defaultPriceMicros),
    rules_count: rulesCount,
    batch_settlement: site.batchSettlement,
    created_at: site.createdAt.toISOString(),
    updated_at: site.updatedAt.toISOString(),
  };
}
