import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, processHost } from './locked-file';

describe('acquireLock', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'locked-file-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const options = { timeoutMs: 200, staleMs: 30_000, busy: 'busy' };

  it('releases only its own lock: one another process took after this one was broken stays', async () => {
    const lock = join(dir, 'budget.json.lock');
    const release = await acquireLock(lock, options);
    // Taken for abandoned by another process (another PID namespace, say), which now holds its own.
    writeFileSync(lock, JSON.stringify({ pid: 1, host: 'elsewhere', at: Date.now(), nonce: 'theirs' }));
    release();
    expect(readFileSync(lock, 'utf8')).toContain('theirs');
  });

  /** A pid no process of this namespace has. */
  const DEAD_PID = 2 ** 22 + 7;

  it.each([
    ['this host and namespace', () => processHost()],
    ['a version that wrote the host name alone (an upgrade)', () => hostname()],
  ])('breaks a lock of %s whose holder no longer runs', async (_who, host) => {
    const lock = join(dir, 'budget.json.lock');
    writeFileSync(lock, JSON.stringify({ pid: DEAD_PID, host: host(), at: Date.now(), nonce: 'dead' }));
    await expect(acquireLock(lock, options)).resolves.toEqual(expect.any(Function));
  });

  it('waits out a lock of the same host name in another pid namespace: its holder may run, unseen from here', async () => {
    const lock = join(dir, 'budget.json.lock');
    // A container sharing the host's name, a sandbox: its pids are not ours to test.
    const elsewhere = `${hostname()} pid:[1]`;
    expect(processHost()).not.toBe(elsewhere);
    writeFileSync(lock, JSON.stringify({ pid: DEAD_PID, host: elsewhere, at: Date.now(), nonce: 'alive' }));
    await expect(acquireLock(lock, options)).rejects.toThrow('busy');
    expect(readFileSync(lock, 'utf8')).toContain('alive');
  });

  it('releases its lock, so the next holder takes it at once', async () => {
    const lock = join(dir, 'budget.json.lock');
    (await acquireLock(lock, options))();
    expect(existsSync(lock)).toBe(false);
    await expect(acquireLock(lock, options)).resolves.toEqual(expect.any(Function));
  });
});
