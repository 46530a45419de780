import { Inject, Injectable } from '@nestjs/common';
import {
  compileSitePrices,
  formatMicrosUsd,
  MAX_PRICING_STEPS,
  MAX_SITE_PRICES_HEAP_BYTES,
  parsePriceUsd,
  priceOfSpelling,
  priceRoute,
  readRoute,
  requestPath,
  type PriceResolution,
  type Pricing,
  type PricingApplied,
  type Route,
  type SitePrices,
  sitePricesHeapBytes,
  tablesOf,
  withinSteps,
} from '@crawlgate/core';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import { VersionedCache } from '../db/versioned-cache';
import type { Site } from '../generated/prisma/client';
import { conflict, notFound, unavailable } from '../http/api-error';
import { ValidationFailed } from '../http/validation-items';
import { CompileBudget } from './compile-budget';
import type { PricingDto } from './pricing.dto';

/** Parses a price the DTO already validated; a failure here is a bug, not bad input. */
function micros(value: number | string): bigint {
  const parsed = parsePriceUsd(value);
  if (!parsed.ok) throw new Error(`Unvalidated price reached the service: ${parsed.msg}`);
  return parsed.micros;
}

/** What a site's price table is built from: its id, its publisher (whose compiles are counted), the pricing version it is cached by, and its default price. */
export type PricedSite = Pick<Site, 'id' | 'publisherId' | 'pricingVersion' | 'defaultPriceMicros'>;

/** Reads of a pricing while replacements keep committing before it gives up (503). */
const MAX_PRICING_READS = 5;

/** Sites whose compiled price tables one instance keeps; the least recently read go first. */
const MAX_CACHED_SITES = 10_000;
/**
 * What those tables may weigh together (their estimated heap bytes): one site's may reach about 25 MB
 * (MAX_SITE_PRICES_HEAP_BYTES, every router's keying included), so a count alone
 * let one account's sites fill the heap.
 */
export const MAX_CACHED_PRICE_BYTES = 64 * 1024 * 1024;

@Injectable()
export class PricingService {
  /** Compiled prices by site, tagged with the pricing version they were built from. */
  private readonly compiled = new VersionedCache<SitePrices>(MAX_CACHED_SITES, {
    maxWeight: MAX_CACHED_PRICE_BYTES,
    weigh: (prices) => prices.heapBytes(),
  });
  private readonly compiles = new CompileBudget();

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
    // Weighed before it is stored: the API and every middleware of the site compile it, for every router's keying.
    const heapBytes = sitePricesHeapBytes(
      rules.map((rule) => rule.pattern),
      MAX_SITE_PRICES_HEAP_BYTES,
    );
    if (heapBytes > MAX_SITE_PRICES_HEAP_BYTES)
      throw new ValidationFailed([
        {
          loc: ['body', 'rules'],
          msg: `These rules take more memory compiled than a site's may, at most ${MAX_SITE_PRICES_HEAP_BYTES / 1024 / 1024} MiB with a table for each way routers read paths: fewer rules, or fewer "*", "?" and "[…]" in them (each "*" starts a part with tables of its own)`,
          type: 'value_error',
        },
      ]);
    // The site's row first: its lock makes a concurrent replacement wait for this one to commit,
    // then delete what this one wrote. Deleting first, the later one could not see rules written
    // after its delete began, and failed on their positions or left them under its own default.
    await this.db.prisma.$transaction([
      this.db.prisma.site.update({
        where: { id: site.id },
        data: {
          defaultPriceMicros: micros(input.default_price_usd),
          pricingVersion: { increment: 1 },
          pricingUpdatedAt: new Date(),
        },
      }),
      this.db.prisma.priceRule.deleteMany({ where: { siteId: site.id } }),
      this.db.prisma.priceRule.createMany({ data: rules }),
    ]);
    return { rules_applied: rules.length };
  }

  /** The site's pricing, one version whole (`site` as read before: its default and version may be a replacement behind). */
  async view(site: Site): Promise<Pricing> {
    const whole = await this.readWhole(site.id, site.pricingVersion);
    return {
      site_id: site.id,
      default_price_usd: formatMicrosUsd(whole.defaultPriceMicros),
      rules: whole.rules.map((rule) => ({ path: rule.pattern, price_usd: formatMicrosUsd(rule.priceMicros) })),
      version: whole.pricingVersion,
      updated_at: whole.pricingUpdatedAt?.toISOString() ?? null,
    };
  }

  /**
   * The site's compiled prices. `site` is read fresh by the caller, so its pricingVersion tells
   * whether the cached prices are stale, on this instance or after a change made through another.
   */
  prices(site: PricedSite): Promise<SitePrices> {
    // Counted against its publisher: an account whose sites weigh most loses its own from the cache first.
    return this.compiled.get(site.id, site.pricingVersion, () => this.load(site), site.publisherId);
  }

  /**
   * Compiled, counted against its publisher's CompileBudget (refused past it: 503): asked again and
   * charged in the same turn as the compile, for every table its keyings may build, so loads that
   * waited on the database together cannot all pass one check.
   */
  private async load({ id: siteId, publisherId, pricingVersion }: PricedSite): Promise<SitePrices> {
    this.compiles.assertMayCompile(publisherId);
    const whole = await this.readWhole(siteId, pricingVersion);
    this.compiles.assertMayCompile(publisherId);
    const rules = whole.rules.map((rule) => ({ pattern: rule.pattern, micros: rule.priceMicros }));
    const prices = compileSitePrices(rules, whole.defaultPriceMicros, () => this.compiled.weighAgain(siteId));
    this.compiles.charge(publisherId, prices.exact.heapBytes * tablesOf(rules.map((rule) => rule.pattern)));
    return prices;
  }

  /**
   * One pricing whole: its rules, then the site's version and default. The same version as before
   * the rules means no replacement committed meanwhile (each bumps it, with its rules, in one
   * transaction); a moved one, that the rules may be the next pricing's: read again, for that
   * version. Never the default of one pricing with the rules of another (an offer no PUT made).
   */
  private async readWhole(siteId: string, knownVersion: number) {
    let version = knownVersion;
    for (let attempt = 0; attempt < MAX_PRICING_READS; attempt++) {
      const rules = await this.db.prisma.priceRule.findMany({ where: { siteId }, orderBy: { position: 'asc' } });
      const now = await this.db.prisma.site.findUnique({
        where: { id: siteId },
        select: { pricingVersion: true, defaultPriceMicros: true, pricingUpdatedAt: true },
      });
      if (!now) throw notFound('Site not found');
      if (now.pricingVersion === version) return { ...now, rules };
      version = now.pricingVersion;
    }
    throw unavailable('The site’s pricing kept changing while it was read; retry');
  }

  /**
   * What a gate for a request target costs: each spelling a router may serve it as (cut at ";",
   * escaped slashes read as "/"), as written and as a lenient router keys it (/PREMIUM/a and
   * /premium/a/ reach /premium/:id), the highest wins; a target routers read apart (dot segments,
   * backslashes) costs the site's highest price. As the middleware prices it by default (core's
   * route.ts): the API does not know the router of a server gating through it.
   */
  async priceOfRoute(site: PricedSite, route: Route): Promise<bigint> {
    return priceRoute(await this.prices(site), route, {});
  }

  /**
   * 409 for a gate about to be paid that was offered before the site's prices last changed, below
   * its path's price now: a gate collected before a price rise does not buy the path at the old
   * price (the middleware refuses such a gate too). Asked before anything is charged. A gate
   * offered after the change stands (a middleware sees a change within 30 s, and its gates until
   * then are the publisher's own offer), and so does one offered above today's price.
   */
  async assertOfferStands(
    site: PricedSite & Pick<Site, 'pricingUpdatedAt'>,
    gate: { path: string; micros: bigint; iat: number },
  ): Promise<void> {
    // In whole seconds, as gates state their time: one offered in the second of the change stands.
    const changedAt = Math.floor((site.pricingUpdatedAt?.getTime() ?? 0) / 1000);
    if (gate.iat >= changedAt) return;
    // The path as the gate spelled it, and every route it reads as (a ";" or "%2F" in it): the highest.
    // Each within the step budget of pricing one request: a path too costly to read costs the site's highest price.
    const prices = await this.prices(site);
    const spelled = withinSteps(MAX_PRICING_STEPS, () => priceOfSpelling(prices, gate.path)) ?? prices.highest;
    const routed = spelled === prices.highest ? spelled : priceRoute(prices, readRoute(gate.path), {});
    if (gate.micros < (spelled > routed ? spelled : routed))
      throw conflict(
        'The price of this path went up since this gate was offered; nothing was charged. Ask for a fresh gate',
      );
  }

  /** Which rule prices `url`; 422 for a path whose lookup would take more than pricing one request may. */
  async resolve(site: Site, url: string): Promise<PriceResolution> {
    const prices = await this.prices(site);
    const match = withinSteps(MAX_PRICING_STEPS, () => prices.exact.resolve(url));
    if (match === undefined)
      throw new ValidationFailed([
        {
          loc: ['query', 'path'],
          msg: `Pricing this path against the site's rules takes longer than pricing one request may; the gate charges it the site's highest price, $${formatMicrosUsd(prices.highest)}`,
          type: 'value_error',
          input: url,
        },
      ]);
    return {
      path: requestPath(url),
      price_usd: formatMicrosUsd(match.micros),
      rule: match.rule,
      pattern: match.pattern,
    };
  }
}
