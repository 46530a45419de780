import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * scrypt N=2^15, r=8, p=1: ~32 MiB and tens of milliseconds a hash, OWASP's floor for scrypt, and
 * what the API hashes with (config.ts); the API's own tests hash with less.
 */
export const DEFAULT_SCRYPT_LOG_N = 15;
/** The most a stored hash may cost (64 MiB of memory while it runs). */
const MAX_SCRYPT_LOG_N = 16;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

/**
 * Passwords hashed at once, in this process: scrypt runs on libuv's pool of four threads, which DNS
 * lookups and file reads share; a flood of logins and registrations (from many networks, each
 * within its limit) would hold them all, and the RPC's lookups waited seconds behind it.
 */
export const PASSWORD_HASHES_AT_ONCE = 2;
/** Checks waiting their turn: one past them is refused at once (PasswordChecksBusy), not queued for seconds. */
export const PASSWORD_HASHES_WAITING = 64;

/** More password checks are waiting than PASSWORD_HASHES_WAITING: nothing was checked. */
export class PasswordChecksBusy extends Error {
  constructor() {
    super('too many password checks are waiting');
    this.name = 'PasswordChecksBusy';
  }
}

let hashing = 0;
const waiting: (() => void)[] = [];

/** Whether a password check asked for now would be refused (PasswordChecksBusy): checked before a login spends its attempts. */
export function passwordChecksFull(): boolean {
  return hashing >= PASSWORD_HASHES_AT_ONCE && waiting.length >= PASSWORD_HASHES_WAITING;
}

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (hashing < PASSWORD_HASHES_AT_ONCE) hashing++;
  else if (waiting.length >= PASSWORD_HASHES_WAITING) throw new PasswordChecksBusy();
  else await new Promise<void>((resolve) => waiting.push(resolve)); // handed the finished one's place
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else hashing--;
  }
}

function derive(password: string, salt: Buffer, logN: number): Promise<Buffer> {
  const N = 2 ** logN;
  return inTurn(
    () =>
      new Promise((resolvePromise, reject) =>
        // scrypt needs 128·N·r bytes; maxmem is its bound, not an allocation.
        scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N, r: R, p: P, maxmem: 256 * N * R }, (error, key) =>
          error ? reject(error) : resolvePromise(key),
        ),
      ),
  );
}

/** Encoded as `scrypt$N$r$p$salt$hash` (base64) so parameters can change later: each hash keeps its own. */
export async function hashPassword(password: string, logN = DEFAULT_SCRYPT_LOG_N): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, logN);
  return ['scrypt', 2 ** logN, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = encoded.split('$');
  // r and p as every hash was made with: others would only cost memory and time.
  if (scheme !== 'scrypt' || r !== String(R) || p !== String(P) || !salt || !hash) return false;
  const logN = Math.log2(Number(n));
  if (!Number.isInteger(logN) || logN < 1 || logN > MAX_SCRYPT_LOG_N) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), logN);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Hashes to check unknown emails against, one per cost, so a login takes as long whether or not the email exists. */
const decoys = new Map<number, Promise<string>>();
export function decoyPasswordHash(logN = DEFAULT_SCRYPT_LOG_N): Promise<string> {
  let decoy = decoys.get(logN);
  if (!decoy) {
    decoys.set(logN, (decoy = hashPassword(randomBytes(16).toString('hex'), logN)));
    // Made again by the next login, never kept failed (a PasswordChecksBusy).
    decoy.catch(() => decoys.get(logN) === decoy && decoys.delete(logN));
  }
  return decoy;
}
