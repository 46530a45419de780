import { Inject, Injectable } from '@nestjs/common';
import { base64urlEncode, generateAccessTokenSecret, randomBytes } from '@crawlgate/core';
import type { AppConfig } from '../config/config';
import type { SecretBox } from '../crypto/secret-box';
import type { Database } from '../db/database';
import { CONFIG, DATABASE, SECRET_BOX } from '../db/tokens';
import { VersionedCache } from '../db/versioned-cache';
import type { Prisma } from '../generated/prisma/client';

export interface SiteSecret {
  kid: string;
  secret: string;
  /** null for the current secret. */
  retiresAt: Date | null;
}

/** The site has no secret to sign with: it was deleted. Any other failure (the database's) is not this. */
export class NoCurrentSecret extends Error {}

/** Sites whose decrypted secrets one instance keeps; the least recently read go first. */
const MAX_CACHED_SITES = 10_000;

/**
 * A site's access-token signing secrets, stored sealed (AES-256-GCM, bound to site and kid).
 * The newest signs; rotated ones keep verifying until their grace period ends.
 *
 * Every token check and gate read needs them, so they are cached decrypted per site, keyed by the
 * site's secrets_version: a rotation bumps it in its own transaction, and each use reads it (with
 * the site row the guard loads anyway, or alone), so every instance sees a rotation at once.
 */
@Injectable()
export class SiteSecretsService {
  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  private readonly cache = new VersionedCache<SiteSecret[]>(MAX_CACHED_SITES);

  /** Creates a secret inside the caller's transaction and returns its plaintext, once. */
  async create(tx: Prisma.TransactionClient, siteId: string): Promise<{ kid: string; secret: string }> {
    const kid = base64urlEncode(randomBytes(6));
    const secret = generateAccessTokenSecret();
    await tx.siteSecret.create({
      data: { siteId, kid, ciphertext: new Uint8Array(this.box.seal(secret, aad(siteId, kid))) },
    });
    return { kid, secret };
  }

  /**
   * A new current secret. The one it replaces keeps verifying for `graceSeconds` (0: not at all,
   * for a leaked secret); any older one stops at once, so a second rotation ends the first grace.
   */
  async rotate(
    siteId: string,
    graceSeconds = this.config.secretGraceSeconds,
  ): Promise<{ kid: string; secret: string; previousKids: string[]; previousValidUntil: Date | null }> {
    const retiresAt = new Date(Date.now() + graceSeconds * 1000);
    return this.db.prisma.$transaction(async (tx) => {
      // One rotation of a site at a time (two at once would each keep a "current" secret), and a new
      // version, so every instance drops what it cached.
      await tx.$executeRaw`UPDATE sites SET secrets_version = secrets_version + 1 WHERE id = ${siteId}::uuid`;
      await tx.siteSecret.deleteMany({ where: { siteId, retiresAt: { not: null } } });
      const previous = await tx.siteSecret.findMany({ where: { siteId, retiresAt: null }, select: { kid: true } });
      if (graceSeconds > 0) await tx.siteSecret.updateMany({ where: { siteId, retiresAt: null }, data: { retiresAt } });
      else await tx.siteSecret.deleteMany({ where: { siteId, retiresAt: null } });
      const created = await this.create(tx, siteId);
      const inGrace = graceSeconds > 0 ? previous.map((row) => row.kid) : [];
      return { ...created, previousKids: inGrace, previousValidUntil: inGrace.length ? retiresAt : null };
    });
  }

  /**
   * Secrets that may verify a token now: the current one and those still in their grace period.
   * `secretsVersion`: the site's, when the caller has the site row; read here otherwise.
   */
  async usable(siteId: string, secretsVersion?: number): Promise<SiteSecret[]> {
    const version = secretsVersion ?? (await this.versionOf(siteId));
    if (version === null) return [];
    const secrets = await this.cache.get(siteId, version, () => this.load(siteId));
    const now = Date.now();
    return secrets.filter((secret) => secret.retiresAt === null || secret.retiresAt.getTime() > now);
  }

  private async load(siteId: string): Promise<SiteSecret[]> {
    const rows = await this.db.prisma.siteSecret.findMany({ where: { siteId }, orderBy: { createdAt: 'desc' } });
    return rows.map((row) => ({
      kid: row.kid,
      secret: this.box.open(row.ciphertext, aad(siteId, row.kid)),
      retiresAt: row.retiresAt,
    }));
  }

  /**
   * Throws unless the master key opens every site's current secret: one it cannot open was sealed
   * with another key (CRAWLGATE_MASTER_KEY changed, or an instance on a shared PostgreSQL generated
   * a master.key of its own). Checked at start, so such an API refuses to serve instead of failing
   * every gate and token check one request at a time. An AES-GCM open takes microseconds: every
   * site, not a sample, so a mix of two keys is found whoever sealed what. No secret yet passes.
   */
  async assertMasterKeyOpensSecrets(): Promise<void> {
    const rows = await this.db.prisma.siteSecret.findMany({
      where: { retiresAt: null },
      select: { siteId: true, kid: true, ciphertext: true },
    });
    const sealedElsewhere = rows.filter((row) => !this.opens(row.ciphertext, aad(row.siteId, row.kid)));
    if (sealedElsewhere.length === 0) return;
    const first = sealedElsewhere[0];
    throw new Error(
      `The master key does not open the access-token secrets of ${sealedElsewhere.length} of ${rows.length} sites stored in this database (the first: secret ${first.kid} of site ${first.siteId}): they were sealed with another key (or are damaged). Start with the CRAWLGATE_MASTER_KEY they were sealed with (every instance on one database must share it); nothing was served.`,
    );
  }

  private opens(sealed: Uint8Array, additionalData: string): boolean {
    try {
      this.box.open(sealed, additionalData);
      return true;
    } catch {
      return false;
    }
  }

  /** The site's secrets' version now; null for a site that does not exist (deleted). */
  async versionOf(siteId: string): Promise<number | null> {
    const [row] = await this.db.sql.query<{ secrets_version: number }>(
      'SELECT secrets_version FROM sites WHERE id = $1::uuid',
      [siteId],
    );
    return row ? Number(row.secrets_version) : null;
  }

  /** The secret new tokens are signed with. */
  async current(siteId: string, secretsVersion?: number): Promise<SiteSecret> {
    const current = (await this.usable(siteId, secretsVersion)).find((secret) => secret.retiresAt === null);
    if (!current) throw new NoCurrentSecret(`Site ${siteId} has no current access-token secret`);
    return current;
  }
}

const aad = (siteId: string, kid: string) => `site-secret:${siteId}:${kid}`;
