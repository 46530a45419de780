import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { chmod, lstat, mkdir, open, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { CliError } from './errors';

/** What `crawlgate login` saves. The key is a credential: the file is private to its owner. */
export interface CliConfig {
  apiUrl?: string;
  apiKey?: string;
}

/** $XDG_CONFIG_HOME/crawlgate/config.json, else ~/.config/…; a relative XDG_CONFIG_HOME is ignored, as the XDG spec says. */
export function configPath(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'crawlgate', 'config.json');
}

export async function readConfig(path: string): Promise<CliConfig> {
  let text: string;
  try {
    // Someone else's file (or a link to one) could name its own API, and the next login's password
    // would go there. Judged, made private and read through one handle, never by name again: a file
    // swapped in between would be the one read or changed.
    const file = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      requirePrivateStats(path, await file.stat(), 'file');
      // It holds the API key: readable by others (copied in by hand, a loose umask), it is made the owner's alone.
      if (process.getuid !== undefined && ((await file.stat()).mode & 0o077) !== 0) await file.chmod(0o600);
      text = await file.readFile('utf8');
    } finally {
      await file.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw notPrivate(path, 'file'); // a link: O_NOFOLLOW
    if (error instanceof CliError) throw error;
    throw new CliError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not valid JSON; fix it or delete it and log in again`);
  }
  const { apiUrl, apiKey } = (data ?? {}) as Record<string, unknown>;
  return {
    apiUrl: typeof apiUrl === 'string' ? apiUrl : undefined,
    apiKey: typeof apiKey === 'string' ? apiKey : undefined,
  };
}

/**
 * Written to a new 0600 temporary file and renamed over the old one, so the key is never readable
 * by others, even briefly; in a directory only its owner can write to, under a name nobody can
 * guess, created exclusively (never through a link someone planted there).
 */
export async function writeConfig(path: string, config: CliConfig): Promise<void> {
  await prepareConfigDir(path);
  const temporary = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  // The mode given to writeFile is filtered by the umask; make it exact.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/**
 * Makes sure the directory of `path` can hold the key, before anything asks the API for one (a key
 * issued and then not saved would be lost, the previous one dead): created 0700, or made so when it
 * is the user's own (a directory made by hand under a umask of 002); refused when it is a link or
 * someone else's.
 */
export async function prepareConfigDir(path: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stats = await lstat(dir);
  if (stats.isDirectory() && isOwn(stats) && !isPrivate(stats)) await chmod(dir, 0o700);
  await requirePrivate(dir, 'directory');
}

/**
 * Refuses `path` unless it is a real file or directory (not a link) of this user that no one else
 * may write to. Where there are no user ids (Windows), only the link is checked.
 */
async function requirePrivate(path: string, kind: 'file' | 'directory'): Promise<void> {
  requirePrivateStats(path, await lstat(path), kind);
}

function requirePrivateStats(path: string, stats: Stats, kind: 'file' | 'directory'): void {
  const wanted = kind === 'file' ? stats.isFile() : stats.isDirectory();
  if (wanted && isOwn(stats) && isPrivate(stats)) return;
  throw notPrivate(path, kind);
}

function notPrivate(path: string, kind: 'file' | 'directory'): CliError {
  return new CliError(
    `${path} is not a ${kind} of yours that only you can change (a link, someone else's, or writable by others): the API key is not kept there. Fix it (chmod go-w) or set XDG_CONFIG_HOME to a directory of your own.`,
  );
}

/** This user's, where there are user ids (not on Windows). */
const isOwn = (stats: Stats): boolean => process.getuid === undefined || stats.uid === process.getuid();
/** Writable by no one else, where modes mean that (not on Windows). */
const isPrivate = (stats: Stats): boolean => process.getuid === undefined || (stats.mode & 0o022) === 0;
