import { configPath, readConfig, writeConfig } from '../config';
import { CliError, UsageError } from '../errors';
import type { CliIo } from '../io';
import { print, stringValue, type Command } from '../command';
import { promptHidden } from '../prompt';
import { newClient } from '../session';
import { fields } from '../table';

export const login: Command = {
  name: 'login',
  usage: '--api <url> --email <email> [--password <password>] [--show-key]',
  summary: 'Log in and save the API URL and a fresh API key',
  help: [
    'The password comes from --password, else CRAWLGATE_PASSWORD, else a prompt that does not echo',
    '(on a terminal). --password is visible to other users in the process list: prefer the others.',
    'Logging in rotates the API key: other sessions using the previous key stop working.',
    'The key is saved to $XDG_CONFIG_HOME/crawlgate/config.json (default ~/.config/…), mode 0600,',
    'and printed only with --show-key. --api may be left out once saved.',
  ].join('\n'),
  options: { email: { type: 'string' }, password: { type: 'string' }, 'show-key': { type: 'boolean' } },
  positionals: [],
  async run(input) {
    const { values, io } = input;
    const path = configPath(io.env);
    const apiUrl = stringValue(values, 'api') ?? (io.env.CRAWLGATE_API_URL || undefined) ?? (await readConfig(path)).apiUrl;
    if (apiUrl === undefined) throw new UsageError('--api <url> is required (the Crawlgate API, e.g. https://api.example.com)', 'login');
    const email = stringValue(values, 'email');
    if (email === undefined) throw new UsageError('--email <email> is required', 'login');
    const client = newClient(apiUrl, io);
    const password = await readPassword(stringValue(values, 'password'), io);

    const issued = await client.login({ email, password });
    const savedUrl = apiUrl.replace(/\/+$/, '');
    await writeConfig(path, { apiUrl: savedUrl, apiKey: issued.api_key });

    const showKey = values['show-key'] === true;
    const result = { publisher_id: issued.publisher_id, api_url: savedUrl, config_path: path, ...(showKey ? { api_key: issued.api_key } : {}) };
    print(input, result, () =>
      `Logged in to ${savedUrl}.\n` +
      fields([
        ['Publisher', issued.publisher_id],
        ['Config', `${path} (mode 0600)`],
        ...(showKey ? ([['API key', issued.api_key]] as [string, string][]) : []),
      ]),
    );
  },
};

async function readPassword(flag: string | undefined, io: CliIo): Promise<string> {
  const password = flag ?? (io.env.CRAWLGATE_PASSWORD || undefined);
  if (password !== undefined) return password;
  if (!io.stdin?.isTTY) throw new CliError('No password: pass --password, set CRAWLGATE_PASSWORD, or run on a terminal to be prompted');
  return promptHidden('Password: ', io.stdin, io.stderr);
}
