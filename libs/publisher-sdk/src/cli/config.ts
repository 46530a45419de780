import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
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

/** Written to a 0600 temporary file and renamed over the old one, so the key is never readable by others, even briefly. */
export async function writeConfig(path: string, config: CliConfig): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFile is filtered by the umask; make it exact.
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}
