/*
 * JSON files that several processes may open: written whole (a temporary copy, fsynced, renamed
 * over the old one: a reader sees the old or the new content, never half of one) and guarded by a
 * lock file created with O_EXCL (one holder at a time). The budget file takes its lock for each
 * change; the channel file holds one for the life of the process that opened it.
 */

import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/** The file's JSON, or undefined when there is no file. */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return JSON.parse(text);
}

export function writeJsonAtomically(path: string, value: unknown): void {
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    try {
      writeSync(fd, JSON.stringify(value, null, 2));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  // The rename itself survives a power cut only once the directory is on disk.
  const directory = openSync(dirname(path), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}

/**
 * The file a path names, through symbolic links; a path to a file not made yet, through its
 * folder's: each spelling of one file must take the same lock. A file with another hard link is
 * refused: each name would take a lock of its own. `what` names the file in errors.
 */
export function realFilePath(path: string, what: string): string {
  try {
    const real = realpathSync(path);
    if (statSync(real).nlink > 1)
      throw new Error(`${path} has another hard link: two names for one ${what} would each lock it alone`);
    return real;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (isSymbolicLink(path)) throw new Error(`${path} links to nothing: not a ${what}`);
  return join(realpathSync(dirname(path)), basename(path));
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Deletes the lock if it is still this one; `stillHeld()`: whether it is (no other process broke it). */
export type HeldLock = (() => void) & { stillHeld(): boolean };

/**
 * Takes the lock, waiting up to `timeoutMs` for its holder; `busy` is the error's message when it
 * cannot. Answers the release, which deletes the lock only while it is still this one: a lock
 * broken meanwhile and taken by another process stays that process's.
 */
export async function acquireLock(
  lockPath: string,
  { timeoutMs, staleMs, busy }: { timeoutMs: number; staleMs: number; busy: string },
): Promise<HeldLock> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = tryLock(lockPath);
    if (text !== false)
      return Object.assign(() => releaseIfMine(lockPath, text), { stillHeld: () => lockText(lockPath) === text });
    breakIfAbandoned(lockPath, staleMs);
    if (Date.now() >= deadline) throw new Error(busy);
    await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10));
  }
}

/** Locks this process holds for its life, by path: a lock file naming this pid and not in here was left by an earlier process. */
const heldForLife = new Set<string>();

/**
 * Takes the lock for as long as this process runs, now or never: a holder that still runs keeps it
 * (`busy` is thrown), one of this host that died loses it. Answers the release, also run at exit;
 * it deletes the lock only while the lock is still this one.
 */
export function holdLock(lockPath: string, busy: string): () => void {
  const key = resolve(lockPath);
  if (heldForLife.has(key)) throw new Error(busy);
  let mine = tryLock(lockPath);
  if (!mine) {
    // A process killed without its exit handler (SIGKILL, SIGTERM) leaves its lock; a container
    // restarted keeps its host name and often its pid, so a lock naming this pid is a dead one.
    breakIfAbandoned(lockPath, Infinity, true);
    mine = tryLock(lockPath);
  }
  if (!mine) throw new Error(busy);
  heldForLife.add(key);
  const text = mine;
  const release = () => {
    process.off('exit', release);
    heldForLife.delete(key);
    releaseIfMine(lockPath, text);
  };
  process.on('exit', release);
  return release;
}

/** Deletes the lock if it still holds `text`, the one taken. */
function releaseIfMine(lockPath: string, text: string): void {
  try {
    if (lockText(lockPath) === text) unlinkSync(lockPath);
  } catch {
    // gone already
  }
}

function lockText(lockPath: string): string | undefined {
  try {
    return readFileSync(lockPath, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The lock's text when it was taken now (it names this process, its host, its start where the kernel
 * tells, the time and a nonce); false when held.
 */
function tryLock(lockPath: string): string | false {
  const text = JSON.stringify({
    pid: process.pid,
    host: processHost(),
    start: startOf(process.pid),
    at: Date.now(),
    nonce: randomUUID(),
  });
  try {
    const fd = openSync(lockPath, 'wx', 0o600);
    writeSync(fd, text);
    closeSync(fd);
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

/**
 * A lock whose holder died (same host) or that is older than `staleMs` is moved away, then deleted;
 * with `ownPidIsDead`, also one naming this very process (the caller holds no such lock). Never one
 * whose holder is known to run, however old: a holder paused (SIGSTOP, a debugger) writes when it
 * resumes, over whatever the next holder wrote. Known where the kernel tells when the pid's process
 * started (Linux): the pid of a holder that died may name another process since.
 */
function breakIfAbandoned(lockPath: string, staleMs: number, ownPidIsDead = false): void {
  let text: string;
  try {
    text = readFileSync(lockPath, 'utf8');
  } catch {
    return; // gone: try again
  }
  let holder: { pid?: number; host?: string; start?: unknown; at?: number };
  try {
    holder = JSON.parse(text);
  } catch {
    return; // being written this instant: look again next round
  }
  const pid = typeof holder.pid === 'number' ? holder.pid : undefined;
  const seen = pid !== undefined && seesPidsOf(holder.host);
  const started = seen && typeof holder.start === 'string' ? startOf(pid) : undefined;
  const runs = seen && isRunning(pid) && (started === undefined || started === holder.start);
  const knownToRun = runs && started !== undefined;
  const abandoned =
    (seen && !runs) ||
    // A lock held for life has no age to wait out: judged by host name and pid alone, as a restarted
    // container (a new pid namespace each start) must take its predecessor's back.
    (ownPidIsDead &&
      pid !== undefined &&
      hostNameOf(holder.host) === hostname() &&
      (pid === process.pid || !isRunning(pid))) ||
    (!knownToRun && typeof holder.at === 'number' && Date.now() - holder.at > staleMs);
  if (!abandoned) return;
  // Renaming is atomic: of several processes seeing the same stale lock, one moves it. One that
  // moved a newer lock instead (taken between its read and its rename) puts it back.
  const moved = `${lockPath}.${process.pid}.${randomUUID()}.stale`;
  try {
    renameSync(lockPath, moved);
  } catch {
    return;
  }
  if (readFileSync(moved, 'utf8') !== text) {
    try {
      linkSync(moved, lockPath);
    } catch {
      // A third lock exists already; the live holder we moved finishes within milliseconds.
    }
  }
  unlinkSync(moved);
}

/**
 * Where a pid names this process's kind: the host name, and the pid namespace where the kernel says
 * (Linux). Processes of one host name in different pid namespaces (a container sharing the host's
 * name, a sandbox) cannot see each other's pids: a pid running there reads as dead here, so only
 * one of the same processHost() is judged by its pid.
 */
export function processHost(): string {
  if (ownProcessHost === undefined) {
    const namespace = pidNamespace();
    ownProcessHost = namespace ? `${hostname()} ${namespace}` : hostname();
  }
  return ownProcessHost;
}
let ownProcessHost: string | undefined;

/**
 * Whether a pid written by a process of `host` (a processHost()) is one this process can test: its
 * own host and pid namespace, or the host name alone, as versions before the namespace wrote it.
 */
export function seesPidsOf(host: unknown): boolean {
  return host === processHost() || host === hostname();
}

/** The host name part of a processHost(). */
function hostNameOf(host: unknown): string | undefined {
  return typeof host === 'string' ? host.split(' ')[0] : undefined;
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/**
 * When the process of `pid` started, in clock ticks since boot, as Linux's /proc tells; undefined
 * elsewhere; 'dead' for a process that died but was not reaped (a zombie: a container with no init
 * reaping its grandchildren), which holds nothing any more.
 */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name in parentheses (which may hold spaces): the state is the
    // 3rd, starttime the 22nd.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' ? 'dead' : fields[19];
  } catch {
    return undefined;
  }
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
