import { resolve } from 'node:path';

/** Everything the API reads from its environment, parsed once at start-up. */
export interface AppConfig {
  port: number;
  host: string;
  /** PostgreSQL URL; unset means embedded PGlite under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** 32-byte key for AES-256-GCM of site secrets; unset means one generated into `dataDir`. */
  masterKey: string | undefined;
  redisUrl: string | undefined;
  accessTokenTtlSeconds: number;
  /** How long a rotated access-token secret still verifies tokens it signed. */
  secretGraceSeconds: number;
  bodyLimitBytes: number;
  /** Trust X-Forwarded-For (behind a load balancer): rate limits per IP then see the client's address. */
  trustProxy: boolean;
  logLevel: 'silent' | 'error' | 'warn' | 'info' | 'debug';
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST ?? '0.0.0.0',
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: resolve(env.CRAWLGATE_DATA_DIR ?? '.data'),
    masterKey: nonEmpty(env.CRAWLGATE_MASTER_KEY),
    redisUrl: nonEmpty(env.REDIS_URL),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 30 * 60, 10, 7 * 24 * 3600),
    secretGraceSeconds: integer(env, 'SECRET_GRACE_SECONDS', 3600, 0, 30 * 24 * 3600),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
    trustProxy: oneOf(env, 'TRUST_PROXY', ['0', '1', 'false', 'true'] as const, '0').match(/^(1|true)$/) !== null,
    logLevel: oneOf(env, 'LOG_LEVEL', ['silent', 'error', 'warn', 'info', 'debug'] as const, 'info'),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}
