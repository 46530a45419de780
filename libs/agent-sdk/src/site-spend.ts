import { domainOf } from './held-authorizations';

/**
 * What each site took, in this process: exact payments counted from before they are signed until
 * they surely moved nothing, against `maxSpendPerSiteUsd`. A site is a domain (domainOf: its last
 * two labels, an IPv4 address, an IPv6 /48), as for held payments: a site sending each link to a
 * subdomain of its own is one site. Counted and checked in one step, so pages fetched at once
 * cannot each pass the check first.
 */
export class SiteSpend {
  private readonly bySite = new Map<string, bigint>();

  constructor(private readonly limitMicros: bigint | undefined) {}

  /** The site `host` belongs to. */
  static siteOf(host: string): string {
    return domainOf(host);
  }

  /** Counts `micros` against `host`'s site; false, nothing counted, when that would pass the cap. */
  take(host: string, micros: bigint): boolean {
    if (this.limitMicros === undefined) return true;
    const site = SiteSpend.siteOf(host);
    const taken = this.bySite.get(site) ?? 0n;
    if (taken + micros > this.limitMicros) return false;
    this.bySite.set(site, taken + micros);
    return true;
  }

  /** Takes back what `take` counted for a payment that surely moved nothing. */
  giveBack(host: string, micros: bigint): void {
    if (this.limitMicros === undefined) return;
    const site = SiteSpend.siteOf(host);
    const left = (this.bySite.get(site) ?? 0n) - micros;
    if (left > 0n) this.bySite.set(site, left);
    else this.bySite.delete(site);
  }

  /** What `host`'s site may still take; undefined without a cap. */
  remaining(host: string): bigint | undefined {
    if (this.limitMicros === undefined) return undefined;
    const left = this.limitMicros - (this.bySite.get(SiteSpend.siteOf(host)) ?? 0n);
    return left > 0n ? left : 0n;
  }
}
