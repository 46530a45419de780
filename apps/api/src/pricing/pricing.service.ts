import { Inject, Injectable } from '@nestjs/common';
import {
  compilePriceTable,
  formatMicrosUsd,
  parsePriceUsd,
  requestPath,
  type PriceResolution,
  type PriceTable,
  type Pricing,
  type PricingApplied,
} from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { VersionedCache } from '../db/versioned-cache';
import type { Site } from '../generated/prisma/client';
import { ValidationFailed } from '../http/validation-items';
import type { PricingDto } from './pricing.dto';

/** Parses a price the DTO already validated; a failure here is a bug, not bad input. */
function micros(value: number | string): bigint {
  const parsed = parsePriceUsd(value);
  if (!parsed.ok) throw new Error(`Unvalidated price reached the service: ${parsed.msg}`);
  return parsed.micros;
}

/** Sites whose compiled price tables one instance keeps; the least recently loaded go first. */
const MAX_CACHED_SITES = 10_000;

@Injectable()
export class PricingService {
  /** Compiled tables by site, tagged with the pricing version they were built from. */
  private readonly tables = new VersionedCache<PriceTable>(MAX_CACHED_SITES);

  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async replace(site: Site, input: PricingDto): Promise<PricingApplied> {
    const rules = (input.rules ?? []).map((rule, index) => {
      if (rule.path !== undefined && rule.path_pattern !== undefined && rule.path !== rule.path_pattern) {
        throw new ValidationFailed([
          {
            loc: ['body', 'rules', index, 'path_pattern'],
            msg: 'path and path_pattern differ; send one of them',
            type: 'value_error',
            input: rule.path_pattern,
          },
        ]);
      }
      return {
        siteId: site.id,
        position: index,
        pattern: (rule.path ?? rule.path_pattern) as string,
        priceMicros: micros(rule.price_usd),
      };
    });
    await this.db.prisma.$transaction([
      this.db.prisma.priceRule.deleteMany({ where: { siteId: site.id } }),
      this.db.prisma.priceRule.createMany({ data: rules }),
      this.db.prisma.site.update({
        where: { id: site.id },
        data: {
          defaultPriceMicros: micros(input.default_price_usd),
          pricingVersion: { increment: 1 },
          pricingUpdatedAt: new Date(),
        },
      }),
    ]);
    return { rules_applied: rules.length };
  }

  async view(site: Site): Promise<Pricing> {
    const rules = await this.db.prisma.priceRule.findMany({ where: { siteId: site.id }, orderBy: { position: 'asc' } });
    return {
      site_id: site.id,
      default_price_usd: formatMicrosUsd(site.defaultPriceMicros),
      rules: rules.map((rule) => ({ path: rule.pattern, price_usd: formatMicrosUsd(rule.priceMicros) })),
      version: site.pricingVersion,
      updated_at: site.pricingUpdatedAt?.toISOString() ?? null,
    };
  }

  /**
   * The site's compiled rules. `site` is read fresh by the caller, so its pricingVersion tells
   * whether the cached table is stale, on this instance or after a change made through another.
   */
  table(site: Site): Promise<PriceTable> {
    return this.tables.get(site.id, site.pricingVersion, async () => {
      const rules = await this.db.prisma.priceRule.findMany({
        where: { siteId: site.id },
        orderBy: { position: 'asc' },
      });
      return compilePriceTable(
        rules.map((rule) => ({ pattern: rule.pattern, micros: rule.priceMicros })),
        site.defaultPriceMicros,
      );
    });
  }

  async resolve(site: Site, url: string): Promise<PriceResolution> {
    const match = (await this.table(site)).resolve(url);
    return {
      path: requestPath(url),
      price_usd: formatMicrosUsd(match.micros),
      rule: match.rule,
      pattern: match.pattern,
    };
  }
}
