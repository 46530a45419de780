import { stringValue, type Command } from '../command';
import { PASSWORD_HELP, readPassword } from '../password';
import { SAVED_KEY_HELP, saveIssuedKey, SIGN_IN_OPTIONS, signInTarget } from '../sign-in';

export const login: Command = {
  name: 'login',
  usage: '--api <url> --email <email> [--password <password>] [--show-key]',
  summary: 'Log in and save the API URL and a fresh API key',
  help: [
    PASSWORD_HELP,
    'Logging in rotates the API key: other sessions using the previous key stop working.',
    SAVED_KEY_HELP,
  ].join('\n'),
  options: SIGN_IN_OPTIONS,
  positionals: [],
  async run(input) {
    const target = await signInTarget(input, 'login');
    const password = await readPassword(stringValue(input.values, 'password'), input.io);
    const issued = await target.client.login({ email: target.email, password });
    await saveIssuedKey(input, target, issued, `Logged in to ${target.apiUrl}.`);
  },
};
