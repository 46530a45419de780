import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock } from './locked-file';

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

  it('releases its lock, so the next holder takes it at once', async () => {
    const lock = join(dir, 'budget.json.lock');
    (await acquireLock(lock, options))();
    expect(existsSync(lock)).toBe(false);
    await expect(acquireLock(lock, options)).resolves.toEqual(expect.any(Function));
  });
});
