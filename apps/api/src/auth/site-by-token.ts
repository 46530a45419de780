import { batchedLookup } from '../db/batched-lookup';
import type { SqlSession } from '../db/sql-driver';
import type { SiteWithPayout } from './request-context';

interface SiteRow {
  id: string;
  publisher_id: string;
  domain: string;
  name: string | null;
  site_token_hash: string;
  default_price_micros: string | bigint;
  pricing_version: number;
  pricing_updated_at: Date | null;
  secrets_version: number;
  batch_settlement: boolean;
  created_at: Date;
  updated_at: Date;
  payout_address: string | null;
}

/**
 * The sites (with their publisher's payout address) of an array of token hashes. The array is of
 * CHAR(64), the column's type: compared with text, the column is cast and its unique index goes
 * unused, so each lookup read the whole table (a denial of service with made-up tokens).
 */
export const SITES_BY_TOKEN_HASHES = `SELECT s.id, s.publisher_id, s.domain, s.name, s.site_token_hash, s.default_price_micros,
       s.pricing_version, s.pricing_updated_at, s.secrets_version, s.batch_settlement, s.created_at, s.updated_at,
       p.payout_address
  FROM sites s JOIN publishers p ON p.id = s.publisher_id
 WHERE s.site_token_hash = ANY($1::char(64)[])`;

const lookups = new WeakMap<SqlSession, (tokenHash: string) => Promise<SiteRow | undefined>>();

/**
 * The site a site token belongs to, with its publisher's payout address, by the token's hash. Every
 * gate and token check starts here, so it is one statement (a join) in raw SQL, made for all the
 * requests that arrived together (batchedLookup): through Prisma it was two queries per request
 * and most of a gate request's CPU time (tools/bench, `npm run bench -- api`).
 */
export async function findSiteByTokenHash(sql: SqlSession, tokenHash: string): Promise<SiteWithPayout | null> {
  let lookup = lookups.get(sql);
  if (!lookup) {
    lookup = batchedLookup((hashes: string[]) => siteRowsByTokenHash(sql, hashes));
    lookups.set(sql, lookup);
  }
  const row = await lookup(tokenHash);
  // An object of its own for each caller: requests that share a token share no state.
  return row ? siteOf(row) : null;
}

/** The rows of the sites these site-token hashes belong to, by hash; a hash no site has is not in the map. */
async function siteRowsByTokenHash(sql: SqlSession, tokenHashes: string[]): Promise<Map<string, SiteRow>> {
  const rows = await sql.query<SiteRow>(SITES_BY_TOKEN_HASHES, [tokenHashes]);
  return new Map(rows.map((row) => [row.site_token_hash, row]));
}

function siteOf(row: SiteRow): SiteWithPayout {
  return {
    id: row.id,
    publisherId: row.publisher_id,
    domain: row.domain,
    name: row.name,
    siteTokenHash: row.site_token_hash,
    defaultPriceMicros: BigInt(row.default_price_micros),
    pricingVersion: Number(row.pricing_version),
    pricingUpdatedAt: row.pricing_updated_at ? new Date(row.pricing_updated_at) : null,
    secretsVersion: Number(row.secrets_version),
    batchSettlement: row.batch_settlement === true,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    publisher: { payoutAddress: row.payout_address },
  };
}
