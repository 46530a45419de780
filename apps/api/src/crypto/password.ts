import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// scrypt N=2^15, r=8, p=1: ~32 MiB and tens of milliseconds a hash, OWASP's floor for scrypt.
const PARAMS = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, params = PARAMS): Promise<Buffer> {
  return new Promise((resolvePromise, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, params, (error, key) =>
      error ? reject(error) : resolvePromise(key),
    ),
  );
}

/** Encoded as `scrypt$N$r$p$salt$hash` (base64) so parameters can change later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = encoded.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), {
    ...PARAMS,
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash to check unknown emails against, so a login takes as long whether or not the email exists. */
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
