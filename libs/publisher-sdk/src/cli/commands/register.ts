import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '@crawlgate/core';
import { stringValue, type Command } from '../command';
import { PASSWORD_HELP, readPassword } from '../password';
import { SAVED_KEY_HELP, saveIssuedKey, SIGN_IN_OPTIONS, signInTarget } from '../sign-in';

export const register: Command = {
  name: 'register',
  usage: '--api <url> --email <email> [--name <name>] [--password <password>] [--show-key]',
  summary: 'Create a publisher account and save the API URL and its API key',
  help: [
    PASSWORD_HELP,
    `The prompt asks twice. The password is ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
    SAVED_KEY_HELP,
    'Next: `crawlgate payout set <address>`, so priced sites can charge, then `crawlgate sites create`.',
  ].join('\n'),
  options: { ...SIGN_IN_OPTIONS, name: { type: 'string' } },
  positionals: [],
  async run(input) {
    const target = await signInTarget(input, 'register');
    const password = await readPassword(stringValue(input.values, 'password'), input.io, { confirm: true });
    const publisher = await target.client.register({
      email: target.email,
      password,
      name: stringValue(input.values, 'name'),
    });
    await saveIssuedKey(
      input,
      target,
      publisher,
      `Registered ${publisher.email} at ${target.apiUrl}. No payout address yet: set one with \`crawlgate payout set <address>\`.`,
      {
        email: publisher.email,
        name: publisher.name,
      },
    );
  },
};
