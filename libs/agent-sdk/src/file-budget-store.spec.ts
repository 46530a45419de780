import { spawn } from 'node:child_process';
import {
  linkSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileBudgetStore } from './file-budget-store';
import { processHost } from './locked-file';

const ROOT = join(__dirname, '..', '..', '..');
const CHILD = join(__dirname, '..', 'testing', 'spend-from-file.ts');
const ENV = { SWC_NODE_PROJECT: join(ROOT, 'tsconfig.base.json'), PATH: process.env.PATH ?? '' };

/** A real Node process running the store from source; resolves with its stdout once it prints `until` (or exits). */
function child(args: string[], until?: string): Promise<{ output: string; pid: number; kill: () => void }> {
  const proc = spawn(process.execPath, ['-r', '@swc-node/register', CHILD, ...args], { cwd: ROOT, env: ENV });
  let output = '';
  let errors = '';
  return new Promise((resolve, reject) => {
    const done = () => resolve({ output: output.trim(), pid: proc.pid!, kill: () => proc.kill('SIGKILL') });
    proc.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (until && output.includes(until)) done();
    });
    proc.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    proc.on('exit', (code) =>
      code === 0
        ? done()
        : until
          ? reject(new Error(`child exited ${code}: ${errors}`))
          : reject(new Error(`child exited ${code}: ${errors}`)),
    );
  });
}

const exited = (pid: number) =>
  new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      try {
        process.kill(pid, 0);
      } catch {
        clearInterval(poll);
        resolve();
      }
    }, 20);
  });

describe('createFileBudgetStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'crawlgate-budget-'));
  });

  it('lets two processes draining one file spend exactly the budget between them, never more', async () => {
    const file = join(dir, 'budget.json');
    const barrier = mkdtempSync(join(tmpdir(), 'crawlgate-budget-barrier-'));
    const [a, b] = await Promise.all([
      child([file, '60000', '1000', 'drain', barrier, '2']),
      child([file, '60000', '1000', 'drain', barrier, '2']),
    ]);
    rmSync(barrier, { recursive: true, force: true });
    const paid = [Number(a.output), Number(b.output)];
    expect(paid[0] + paid[1]).toBe(60);
    // Both took turns (they started together): neither had the file to itself.
    expect(paid.every((count) => count > 0)).toBe(true);
    const state = await createFileBudgetStore(file).read();
    expect(state).toEqual({ spentMicros: 60_000n, reservedMicros: 0n, payments: 60 });
    expect(readdirSync(dir).sort()).toEqual(['budget.json']); // no lock or temporary file left
  }, 60_000);

  it('continues after a restart from what was spent', async () => {
    const file = join(dir, 'budget.json');
    expect((await child([file, '3000', '1000', 'drain'])).output).toBe('3');
    // The same budget raised, as a restarted crawler would open it: only the rest is left.
    const store = createFileBudgetStore(file);
    expect(store.lastSeen()).toEqual({ spentMicros: 3000n, reservedMicros: 0n, payments: 3 });
    expect(await store.reserve(2_001n, 5_000n)).toBeNull();
    expect(await store.reserve(2_000n, 5_000n)).not.toBeNull();
    expect((await child([file, '5000', '1', 'drain'])).output).toBe('0');
  }, 60_000);

  it('takes money that came back off the file’s spending, for every process that opens it', async () => {
    const file = join(dir, 'budget.json');
    const store = createFileBudgetStore(file);
    await store.settle((await store.reserve(3_000n, 5_000n))!.reservation, true);
    expect(await store.credit!(1_000n)).toEqual({ spentMicros: 2_000n, reservedMicros: 0n, payments: 1 });
    expect(createFileBudgetStore(file).lastSeen()).toEqual({ spentMicros: 2_000n, reservedMicros: 0n, payments: 1 });
    expect(await store.credit!(9_000n)).toMatchObject({ spentMicros: 0n });
  });

  it('counts the reservation of a process killed mid-payment as spent: a crash frees no money', async () => {
    const file = join(dir, 'budget.json');
    const crashed = await child([file, '10000', '4000', 'crash'], 'reserved');
    crashed.kill();
    await exited(crashed.pid);
    const store = createFileBudgetStore(file);
    expect(await store.read()).toEqual({ spentMicros: 4000n, reservedMicros: 0n, payments: 0 });
    expect(await store.reserve(6_001n, 10_000n)).toBeNull();
  }, 60_000);

  it('breaks a lock left by a dead process, and waits for a live one', async () => {
    const file = join(dir, 'budget.json');
    const dead = await child([file, '1', '1', 'drain']);
    await exited(dead.pid);
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: dead.pid, host: processHost(), at: Date.now() }));
    const store = createFileBudgetStore(file);
    expect(await store.reserve(1n, 10n)).not.toBeNull();

    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: processHost(), at: Date.now() }));
    await expect(createFileBudgetStore(file, { lockTimeoutMs: 200 }).reserve(1n, 10n)).rejects.toThrow(/locked/);
  });

  it('counts as spent the reservations of dead processes whose pids it can test, and only those', async () => {
    const file = join(dir, 'budget.json');
    const dead = 2 ** 22 + 7;
    const reservations = {
      here: { micros: '1', pid: dead, host: processHost() },
      // Written by a version that named the host alone (an upgrade): its pid is this host's.
      before: { micros: '10', pid: dead, host: hostname() },
      // Another pid namespace of the same host name: its process may run, unseen from here.
      elsewhere: { micros: '100', pid: dead, host: `${hostname()} pid:[1]` },
    };
    writeFileSync(file, JSON.stringify({ version: 1, spent_micros: '0', payments: 0, reservations }));
    expect(await createFileBudgetStore(file).read()).toMatchObject({ spentMicros: 11n, reservedMicros: 100n });
  });

  it('refuses a file that is not a budget rather than starting from zero', () => {
    const file = join(dir, 'budget.json');
    writeFileSync(file, JSON.stringify({ version: 1, spent_micros: '-5', payments: 0, reservations: {} }));
    expect(() => createFileBudgetStore(file)).toThrow(/not a Crawlgate budget file/);
    writeFileSync(file, '{"trunc');
    expect(() => createFileBudgetStore(file)).toThrow();
  });

  it('refuses a reservation that is not a whole number of micro-USD, and a file that is JSON null', () => {
    const file = join(dir, 'budget.json');
    const reservation = { micros: '-900000', pid: process.pid, host: processHost() };
    writeFileSync(
      file,
      JSON.stringify({ version: 1, spent_micros: '0', payments: 0, reservations: { r: reservation } }),
    );
    expect(() => createFileBudgetStore(file)).toThrow(/not a Crawlgate budget file/);
    // pid 0 names no process (signalling it signals the whole group): never a reservation's.
    const noProcess = { micros: '5', pid: 0, host: processHost() };
    writeFileSync(file, JSON.stringify({ version: 1, spent_micros: '0', payments: 0, reservations: { r: noProcess } }));
    expect(() => createFileBudgetStore(file)).toThrow(/not a Crawlgate budget file/);
    writeFileSync(file, 'null');
    expect(() => createFileBudgetStore(file)).toThrow(/not a Crawlgate budget file/);
  });

  it('refuses to pay once its file is gone or emptied, rather than start again from zero', async () => {
    const file = join(dir, 'budget.json');
    const store = createFileBudgetStore(file);
    await store.settle((await store.reserve(9n, 10n))!.reservation, true);
    rmSync(file);
    await expect(store.reserve(1n, 10n)).rejects.toThrow(/is gone/);
    writeFileSync(file, 'null');
    await expect(store.reserve(1n, 10n)).rejects.toThrow(/not a Crawlgate budget file/);
    // Another process opening a file that does not exist yet starts a new budget: that is how one begins.
    rmSync(file);
    expect(await createFileBudgetStore(file).reserve(10n, 10n)).not.toBeNull();
  });

  it('refuses a budget file made anew after it saw another: a store that never saw it cannot reset it for the others', async () => {
    const file = join(dir, 'budget.json');
    const idle = createFileBudgetStore(file); // opened before the file existed
    const spender = createFileBudgetStore(file);
    await spender.settle((await spender.reserve(9n, 10n))!.reservation, true);
    rmSync(file);
    expect(await idle.reserve(9n, 10n)).not.toBeNull(); // it cannot know: it starts the file again
    await expect(spender.reserve(1n, 10n)).rejects.toThrow(/another budget/);
  });

  it('refuses a budget file with another hard link: two names would each get a lock of their own', async () => {
    const file = join(dir, 'budget.json');
    await createFileBudgetStore(file).reserve(1n, 10n);
    linkSync(file, join(dir, 'other-name.json'));
    expect(() => createFileBudgetStore(join(dir, 'other-name.json'))).toThrow(/hard link/);
    expect(() => createFileBudgetStore(file)).toThrow(/hard link/);
  });

  it('follows a symbolic link to the one real file: two paths to it share one budget and one lock', async () => {
    const real = join(dir, 'budget.json');
    const link = join(dir, 'link.json');
    const first = createFileBudgetStore(real);
    await first.settle((await first.reserve(6n, 10n))!.reservation, true);
    symlinkSync(real, link);
    const second = createFileBudgetStore(link);
    expect(await second.reserve(6n, 10n)).toBeNull();
    expect(await first.reserve(4n, 10n)).not.toBeNull();
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    // A link to nothing would be replaced by a file of its own on the first write: refused.
    symlinkSync(join(dir, 'nowhere.json'), join(dir, 'dangling.json'));
    expect(() => createFileBudgetStore(join(dir, 'dangling.json'))).toThrow(/links to nothing/);
  });

  it('keeps money as decimal strings of micro-USD in the file', async () => {
    const file = join(dir, 'budget.json');
    const store = createFileBudgetStore(file);
    const reserved = await store.reserve(12_345n, 1_000_000n);
    await store.settle(reserved!.reservation, true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      budget_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      spent_micros: '12345',
      payments: 1,
      reservations: {},
    });
  });
});
