import {
  decoyPasswordHash,
  DEFAULT_SCRYPT_LOG_N,
  hashPassword,
  PASSWORD_HASHES_AT_ONCE,
  PASSWORD_HASHES_WAITING,
  PasswordChecksBusy,
  verifyPassword,
} from './password';

describe('password hashes', () => {
  it('hashes with scrypt N=2^15, r=8, p=1 by default, a salt of its own each time, and verifies only the password', async () => {
    const hash = await hashPassword('correct horse');
    const [scheme, n, r, p, salt, key] = hash.split('$');
    expect([scheme, n, r, p]).toEqual(['scrypt', String(2 ** 15), '8', '1']);
    expect(DEFAULT_SCRYPT_LOG_N).toBe(15);
    expect(Buffer.from(salt, 'base64')).toHaveLength(16);
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(await hashPassword('correct horse')).not.toBe(hash);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse ', hash)).toBe(false);
  });

  it('refuses a password check past PASSWORD_HASHES_WAITING waiting for the PASSWORD_HASHES_AT_ONCE running, and takes the next once one is done (helper-442)', async () => {
    // A flood of logins would otherwise hold every thread of the pool DNS lookups and file reads share.
    const flood = Array.from({ length: PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING + 1 }, () =>
      hashPassword('pw', 4).then(
        () => 'hashed',
        (error: unknown) => error,
      ),
    );
    const outcomes = await Promise.all(flood);
    expect(outcomes.filter((outcome) => outcome instanceof PasswordChecksBusy)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'hashed')).toHaveLength(
      PASSWORD_HASHES_AT_ONCE + PASSWORD_HASHES_WAITING,
    );
    expect(await verifyPassword('pw', await hashPassword('pw', 4))).toBe(true);
  });

  it('keeps the cost it was made with: a hash of another cost verifies as it was made', async () => {
    const cheap = await hashPassword('pw', 10);
    expect(cheap.split('$')[1]).toBe(String(2 ** 10));
    expect(await verifyPassword('pw', cheap)).toBe(true);
    expect(await verifyPassword('pw2', cheap)).toBe(false);
  });

  it('refuses a stored hash of another scheme, a cost that is no power of two or past 2^16, or other r or p', async () => {
    const [, n, r, p, salt, key] = (await hashPassword('pw', 10)).split('$');
    for (const cost of ['1000', '0', 'x', String(2 ** 17)])
      expect(await verifyPassword('pw', ['scrypt', cost, r, p, salt, key].join('$'))).toBe(false);
    for (const [otherR, otherP] of [
      ['256', p],
      [r, '64'],
      ['8.5', p],
      [r, ''],
    ])
      expect(await verifyPassword('pw', ['scrypt', n, otherR, otherP, salt, key].join('$'))).toBe(false);
    expect(await verifyPassword('pw', ['bcrypt', 1024, r, p, salt, key].join('$'))).toBe(false);
  });

  it('keeps one decoy per cost, hashed at that cost, so an unknown email costs what a known one does', async () => {
    const decoy = await decoyPasswordHash(10);
    expect(await decoyPasswordHash(10)).toBe(decoy);
    expect(decoy.split('$')[1]).toBe(String(2 ** 10));
    expect((await decoyPasswordHash(11)).split('$')[1]).toBe(String(2 ** 11));
  });
});
