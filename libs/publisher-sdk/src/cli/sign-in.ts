import type { PublisherClient } from '../client';
import { print, stringValue, type CommandInput } from './command';
import { configPath, prepareConfigDir, readConfig, writeConfig } from './config';
import { UsageError } from './errors';
import { newClient } from './session';
import { fields } from './table';

/** Said in the help of every command that saves a key. */
export const SAVED_KEY_HELP = [
  'The key is saved to $XDG_CONFIG_HOME/crawlgate/config.json (default ~/.config/…), mode 0600,',
  'and printed only with --show-key. --api may be left out once saved.',
].join('\n');

export const SIGN_IN_OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  'show-key': { type: 'boolean' },
} as const;

export interface SignIn {
  apiUrl: string;
  email: string;
  configPath: string;
  /** Without a key: register and login set one. */
  client: PublisherClient;
}

/** What login and register need before asking for the password: the API (--api, CRAWLGATE_API_URL or the saved one) and --email. */
export async function signInTarget(input: CommandInput, command: string): Promise<SignIn> {
  const { values, io } = input;
  const path = configPath(io.env);
  const apiUrl =
    stringValue(values, 'api') ?? (io.env.CRAWLGATE_API_URL || undefined) ?? (await readConfig(path)).apiUrl;
  if (apiUrl === undefined)
    throw new UsageError('--api <url> is required (the Crawlgate API, e.g. https://api.example.com)', command);
  const email = stringValue(values, 'email');
  if (email === undefined) throw new UsageError('--email <email> is required', command);
  const client = newClient(apiUrl, io);
  // Before the API issues a key (and retires the previous one): a key that could not be saved would be lost.
  await prepareConfigDir(path);
  return { apiUrl: apiUrl.replace(/\/+$/, ''), email, configPath: path, client };
}

/**
 * Saves a freshly issued key for its API and reports it: the key itself only with --show-key,
 * so it never lands in a terminal's scrollback or a CI log unasked.
 */
export async function saveIssuedKey(
  input: CommandInput,
  at: { apiUrl: string; configPath: string },
  issued: { publisher_id: string; api_key: string },
  headline: string,
  extra: Record<string, string | null> = {},
): Promise<void> {
  try {
    await writeConfig(at.configPath, { apiUrl: at.apiUrl, apiKey: issued.api_key });
  } catch (error) {
    // The previous key no longer works: this is the new one's only copy.
    input.io.stderr(`The new API key could not be saved; here is its only copy:\n  ${issued.api_key}\n`);
    throw error;
  }
  const showKey = input.values['show-key'] === true;
  const result = {
    publisher_id: issued.publisher_id,
    ...extra,
    api_url: at.apiUrl,
    config_path: at.configPath,
    ...(showKey ? { api_key: issued.api_key } : {}),
  };
  print(
    input,
    result,
    () =>
      `${headline}\n` +
      fields([
        ['Publisher', issued.publisher_id],
        ...Object.entries(extra).map(([label, value]): [string, string] => [
          label[0].toUpperCase() + label.slice(1).replace(/_/g, ' '),
          value ?? 'none',
        ]),
        ['Config', `${at.configPath} (mode 0600)`],
        ...(showKey ? ([['API key', issued.api_key]] as [string, string][]) : []),
      ]),
  );
}
