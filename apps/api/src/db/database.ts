import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client';
import { pgDriver, pgliteDriver, type SqlDriver } from './sql-driver';

export interface Database {
  kind: 'pglite' | 'postgres';
  /** The schema its tables are in: "public" unless a test isolates one. */
  schema: string;
  prisma: PrismaClient;
  sql: SqlDriver;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL URL; without it, PGlite. */
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests isolate by schema). */
  schema?: string;
  /** PGlite data directory; the folder `pglite` inside it is used. */
  dataDir?: string;
  /** An already-open PGlite (tests load one from a migrated template). */
  pglite?: PGlite;
}

/** Which database `openDatabase(options)` opens. */
export const databaseKind = (options: Pick<DatabaseOptions, 'databaseUrl'>): Database['kind'] =>
  options.databaseUrl ? 'postgres' : 'pglite';

/**
 * Every session's time zone. Prisma writes and reads timestamps without a zone, in the session's:
 * a server or database whose default is another zone shifts every stored time, and moves stats
 * between days, beside the raw statements that write them in UTC.
 */
const SESSION_TIME_ZONE = "SET TIME ZONE 'UTC'";
/**
 * Every PostgreSQL session's transactions, whatever the server's default: the stores' compare-and-set
 * writes re-read a row they lost a race to, where REPEATABLE READ or SERIALIZABLE fail them (40001).
 */
const SESSION_ISOLATION = 'SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED';

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (databaseKind(options) === 'postgres') return openPostgres(options.databaseUrl!, options.schema);
  const db = options.pglite ?? (await openPgliteDir(options.dataDir));
  await db.exec(SESSION_TIME_ZONE);
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
  return {
    kind: 'pglite',
    schema: 'public',
    prisma,
    sql: pgliteDriver(db),
    close: once(async () => {
      await prisma.$disconnect();
      if (!db.closed) await db.close();
    }),
  };
}

async function openPgliteDir(dataDir: string | undefined): Promise<PGlite> {
  if (!dataDir) return PGlite.create();
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  return PGlite.create(dir);
}

/**
 * Asked of the server for each session: notice within about a minute that a client is gone (a host
 * that died, a network that split). A background job's advisory lock is held by its session, and
 * the server's defaults (keepalives after 2 h idle) left every other instance skipping that job for
 * over two hours: payments unconfirmed, vouchers unclaimed. Set by SQL once connected, not as a
 * startup option, which a connection pooler (PgBouncer) may refuse.
 */
export const SESSION_KEEPALIVES =
  'SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3';

function openPostgres(url: string, schema: string | undefined): Database {
  const pool = new Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    // The same from this side: a server that is gone is noticed too, not waited on.
    keepAlive: true,
    keepAliveInitialDelayMillis: 30_000,
    ...(schema ? { options: `-c search_path="${schema}"` } : {}),
    // Awaited by pg-pool before the client is handed out (@types/pg types it void). The time zone
    // must hold (a failure fails the connection); a server that refuses the keepalives keeps its own.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    onConnect: async (client) => {
      await client.query(SESSION_TIME_ZONE);
      await client.query(SESSION_ISOLATION);
      await client.query(SESSION_KEEPALIVES).catch(() => undefined);
    },
  });
  // An idle client losing its server (PostgreSQL restarted) must not crash the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, schema ? { schema } : undefined) });
  return {
    kind: 'postgres',
    schema: schema ?? 'public',
    prisma,
    sql: pgDriver(pool),
    close: once(async () => {
      await prisma.$disconnect();
      await pool.end();
    }),
  };
}

/** Closing twice is harmless: the second call waits for the first. */
function once(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= close());
}
