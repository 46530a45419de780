import type { SqlSession } from '../db/sql-driver';
import type { Gate } from '../generated/prisma/client';

export type NewGate = Pick<Gate, 'id' | 'siteId' | 'url' | 'resource' | 'priceMicros' | 'network' | 'chainId' | 'asset' | 'payTo' | 'expiresAt'>;

interface GateRow {
  id: string;
  site_id: string;
  url: string;
  resource: string;
  price_micros: string | bigint;
  network: string;
  chain_id: number;
  asset: string;
  pay_to: string;
  status: Gate['status'];
  created_at: Date;
  expires_at: Date;
  paid_at: Date | null;
}

/**
 * Creating a gate is the hottest write (every unpaid bot request): the gate and its site's daily
 * count go in one statement, so they are atomic without a transaction's extra round trips.
 */
export async function insertGate(sql: SqlSession, gate: NewGate): Promise<Gate> {
  const [row] = await sql.query<GateRow>(
    `WITH inserted AS (
       INSERT INTO gates (id, site_id, url, resource, price_micros, network, chain_id, asset, pay_to, expires_at)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5::bigint, $6, $7, $8, $9, $10::timestamptz)
       RETURNING *
     ), counted AS (
       INSERT INTO site_daily_counts (site_id, day, gates_created)
       SELECT site_id, (created_at AT TIME ZONE 'UTC')::date, 1 FROM inserted
       ON CONFLICT (site_id, day) DO UPDATE SET gates_created = site_daily_counts.gates_created + 1
     )
     SELECT * FROM inserted`,
    [gate.id, gate.siteId, gate.url, gate.resource, gate.priceMicros.toString(), gate.network, gate.chainId, gate.asset, gate.payTo, gate.expiresAt.toISOString()],
  );
  return {
    id: row.id,
    siteId: row.site_id,
    url: row.url,
    resource: row.resource,
    priceMicros: BigInt(row.price_micros),
    network: row.network,
    chainId: Number(row.chain_id),
    asset: row.asset,
    payTo: row.pay_to,
    status: row.status,
    createdAt: new Date(row.created_at),
    expiresAt: new Date(row.expires_at),
    paidAt: row.paid_at ? new Date(row.paid_at) : null,
  };
}
