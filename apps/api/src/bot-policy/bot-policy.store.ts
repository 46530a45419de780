import type { BotAction, BotPolicyRules } from '@crawlgate/core';
import type { SqlSession } from '../db/sql-driver';

/** A site's stored policy as written: what core's checks accepted, names in the catalogue's spelling. */
export interface StoredBotPolicy {
  rules: BotPolicyRules;
  version: number;
  updatedAt: Date;
}

interface Row {
  categories: BotPolicyRules['categories'];
  bots: BotPolicyRules['bots'];
  require_signature: BotPolicyRules['require_signature'];
  version: number;
  updated_at: Date;
}

const COLUMNS = 'categories, bots, require_signature, version, updated_at';

function stored(row: Row): StoredBotPolicy {
  return {
    rules: { categories: row.categories, bots: row.bots, require_signature: row.require_signature },
    version: row.version,
    updatedAt: row.updated_at,
  };
}

/** The site's policy; null while none was ever set. */
export async function readBotPolicy(sql: SqlSession, siteId: string): Promise<StoredBotPolicy | null> {
  const [row] = await sql.query<Row>(`SELECT ${COLUMNS} FROM bot_policies WHERE site_id = $1::uuid`, [siteId]);
  return row ? stored(row) : null;
}

/** Replaces the whole policy; one statement, so two writers each leave a whole policy and their own version. */
export async function replaceBotPolicy(
  sql: SqlSession,
  siteId: string,
  rules: BotPolicyRules,
): Promise<StoredBotPolicy> {
  const [row] = await sql.query<Row>(
    `INSERT INTO bot_policies (site_id, categories, bots, require_signature, version, updated_at)
     VALUES ($1::uuid, $2::jsonb, $3::jsonb, $4::jsonb, 1, now())
     ON CONFLICT (site_id) DO UPDATE SET
       categories = EXCLUDED.categories, bots = EXCLUDED.bots, require_signature = EXCLUDED.require_signature,
       version = bot_policies.version + 1, updated_at = EXCLUDED.updated_at
     RETURNING ${COLUMNS}`,
    [siteId, JSON.stringify(rules.categories), JSON.stringify(rules.bots), JSON.stringify(rules.require_signature)],
  );
  return stored(row);
}

/**
 * Sets one crawler's action, keeping the rest of the policy: merged in SQL, so concurrent
 * one-click changes to different crawlers all stay.
 */
export async function setBotAction(
  sql: SqlSession,
  siteId: string,
  name: string,
  action: BotAction,
): Promise<StoredBotPolicy> {
  const [row] = await sql.query<Row>(
    `INSERT INTO bot_policies (site_id, categories, bots, require_signature, version, updated_at)
     VALUES ($1::uuid, '{}'::jsonb, jsonb_build_object($2::text, $3::text), '{"categories": [], "bots": []}'::jsonb, 1, now())
     ON CONFLICT (site_id) DO UPDATE SET
       bots = bot_policies.bots || jsonb_build_object($2::text, $3::text),
       version = bot_policies.version + 1, updated_at = EXCLUDED.updated_at
     RETURNING ${COLUMNS}`,
    [siteId, name, action],
  );
  return stored(row);
}

/** Removes one crawler's action; the policy (and its version) stays as it was when it had none. */
export async function removeBotAction(sql: SqlSession, siteId: string, name: string): Promise<StoredBotPolicy | null> {
  const [row] = await sql.query<Row>(
    `UPDATE bot_policies SET bots = bots - $2::text, version = version + 1, updated_at = now()
      WHERE site_id = $1::uuid AND bots ? $2::text
     RETURNING ${COLUMNS}`,
    [siteId, name],
  );
  return row ? stored(row) : readBotPolicy(sql, siteId);
}
