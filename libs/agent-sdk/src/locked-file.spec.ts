import { spawn, type ChildProcess } from 'node:child_process';
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

  describe('a holder of this host that still runs', () => {
    let holder: ChildProcess;
    beforeAll(() => {
      holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    });
    afterAll(() => void holder.kill('SIGKILL'));
    /** The kernel's start time of a process (Linux), as the lock records its holder's. */
    const startOf = (pid: number) => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    };

    it('keeps its lock however old: a holder paused past staleMs would write over the next holder’s changes', async () => {
      // Broken by age, the lock of a process stopped for 30 s (SIGSTOP, a debugger) went to another,
      // and the first, resumed, wrote the budget it read before: reservations were lost, the limit passed.
      const lock = join(dir, 'budget.json.lock');
      const text = JSON.stringify({
        pid: holder.pid,
        host: processHost(),
        start: startOf(holder.pid!),
        at: Date.now() - 3_600_000,
        nonce: 'paused',
      });
      writeFileSync(lock, text);
      await expect(acquireLock(lock, { ...options, staleMs: 10 })).rejects.toThrow('busy');
      expect(readFileSync(lock, 'utf8')).toBe(text);
    });

    it('takes a lock whose pid now names a process started after it (the holder died, its pid reused)', async () => {
      const lock = join(dir, 'budget.json.lock');
      const start = String(Number(startOf(holder.pid!)) - 1);
      writeFileSync(
        lock,
        JSON.stringify({ pid: holder.pid, host: processHost(), start, at: Date.now(), nonce: 'reused' }),
      );
      await expect(acquireLock(lock, options)).resolves.toEqual(expect.any(Function));
    });
  });

  it('takes a lock whose holder died and was never reaped (a zombie, in a container with no init)', async () => {
    // Its pid still answers kill(pid, 0) and keeps its start time: taken for running, its lock was never broken.
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(
        await new Promise<string>((resolve) => parent.stdout!.once('data', (data) => resolve(String(data)))),
      );
      const stat = () => readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = () =>
        stat()
          .slice(stat().lastIndexOf(')') + 2)
          .split(' ');
      const deadline = Date.now() + 5_000;
      while (fields()[0] !== 'Z' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(fields()[0]).toBe('Z');
      const lock = join(dir, 'budget.json.lock');
      writeFileSync(
        lock,
        JSON.stringify({ pid, host: processHost(), start: fields()[19], at: Date.now(), nonce: 'zombie' }),
      );
      await expect(acquireLock(lock, options)).resolves.toEqual(expect.any(Function));
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('knows whether it still holds its lock: one broken and taken by another is not its own', async () => {
    const lock = join(dir, 'budget.json.lock');
    const release = await acquireLock(lock, options);
    expect(release.stillHeld()).toBe(true);
    writeFileSync(lock, JSON.stringify({ pid: 1, host: 'elsewhere', at: Date.now(), nonce: 'theirs' }));
    expect(release.stillHeld()).toBe(false);
  });

  it('releases its lock, so the next holder takes it at once', async () => {
    const lock = join(dir, 'budget.json.lock');
    (await acquireLock(lock, options))();
    expect(existsSync(lock)).toBe(false);
    await expect(acquireLock(lock, options)).resolves.toEqual(expect.any(Function));
  });
});
