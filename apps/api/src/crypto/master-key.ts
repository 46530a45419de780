import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The master key comes from CRAWLGATE_MASTER_KEY (64 hex chars or base64 of 32 bytes).
 * Without it, a key is generated once into the data directory (mode 0600), which is right
 * for the embedded default; several instances on one PostgreSQL must share the env key.
 */
export function resolveMasterKey(
  configured: string | undefined,
  dataDir: string,
): { key: Buffer; source: 'env' | 'file' } {
  if (configured !== undefined) return { key: decodeKey(configured, 'CRAWLGATE_MASTER_KEY'), source: 'env' };
  const file = join(dataDir, 'master.key');
  try {
    return { key: decodeKey(readFileSync(file, 'utf8').trim(), file), source: 'file' };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return { key, source: 'file' };
}

function decodeKey(text: string, origin: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error(`${origin} must hold 32 bytes as 64 hex characters or base64`);
  return key;
}
