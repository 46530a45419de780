import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { findSiteByTokenHash, SITES_BY_TOKEN_HASHES } from './site-by-token';

/** The raw lookup must hand the guard exactly what Prisma would, on PGlite and PostgreSQL alike. */
describe('findSiteByTokenHash', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.dispose());

  async function publisherWithSite(
    payoutAddress: string | null,
    site: { defaultPriceMicros: bigint; pricingVersion: number; pricingUpdatedAt: Date | null; name: string | null },
  ) {
    const tag = Math.random().toString(36).slice(2, 10);
    const publisher = await db.database.prisma.publisher.create({
      data: { email: `${tag}@example.com`, passwordHash: 'x', apiKeyHash: tag.padEnd(64, 'a'), payoutAddress },
    });
    const tokenHash = tag.padEnd(64, 'b');
    await db.database.prisma.site.create({
      data: { publisherId: publisher.id, domain: `${tag}.example.com`, siteTokenHash: tokenHash, ...site },
    });
    return tokenHash;
  }

  const viaPrisma = (tokenHash: string) =>
    db.database.prisma.site.findUnique({
      where: { siteTokenHash: tokenHash },
      include: { publisher: { select: { payoutAddress: true } } },
    });

  it('returns the site as Prisma does, with the payout address: big prices, versions and dates intact', async () => {
    const tokenHash = await publisherWithSite('0x70997970c51812dc3a010c7d01b50e0d17dc79c8', {
      defaultPriceMicros: 999_999n,
      pricingVersion: 7,
      pricingUpdatedAt: new Date('2026-11-23T10:11:12.345Z'),
      name: 'News',
    });
    const site = await findSiteByTokenHash(db.database.sql, tokenHash);
    expect(site).toEqual(await viaPrisma(tokenHash));
    expect(site).toMatchObject({
      defaultPriceMicros: 999_999n,
      pricingVersion: 7,
      publisher: { payoutAddress: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' },
    });
  });

  it('returns nulls as nulls: no name, no pricing yet, no payout address', async () => {
    const tokenHash = await publisherWithSite(null, {
      defaultPriceMicros: 0n,
      pricingVersion: 0,
      pricingUpdatedAt: null,
      name: null,
    });
    const site = await findSiteByTokenHash(db.database.sql, tokenHash);
    expect(site).toEqual(await viaPrisma(tokenHash));
    expect(site).toMatchObject({ name: null, pricingUpdatedAt: null, publisher: { payoutAddress: null } });
  });

  it('returns null for a hash no site has', async () => {
    expect(await findSiteByTokenHash(db.database.sql, 'f'.repeat(64))).toBeNull();
  });

  it('answers lookups made together (one statement) each with its own site, as an object of its own', async () => {
    const site = { defaultPriceMicros: 10n, pricingVersion: 1, pricingUpdatedAt: null, name: null };
    const [a, b] = [await publisherWithSite(null, site), await publisherWithSite('0x' + 'ab'.repeat(20), site)];
    const found = await Promise.all(
      [a, b, 'e'.repeat(64), a].map((hash) => findSiteByTokenHash(db.database.sql, hash)),
    );
    expect(found[0]).toEqual(await viaPrisma(a));
    expect(found[1]).toEqual(await viaPrisma(b));
    expect(found[2]).toBeNull();
    expect(found[3]).toEqual(found[0]);
    expect(found[3]).not.toBe(found[0]); // requests that share a token share no object
  });

  it("finds the sites through the unique index of token hashes: every request of an attacker's made-up tokens is a lookup, never a scan", async () => {
    // The column is CHAR(64): compared with text, PostgreSQL casts the column and cannot use its index.
    const plan = await db.database.sql.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${SITES_BY_TOKEN_HASHES}`, [['a'.repeat(64)]]);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('sites_site_token_hash_key');
    expect(plan).not.toMatch(/Seq Scan on sites/);
  });
});
