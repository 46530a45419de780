import { payoutProofMessageOf } from '../../errors';
import type { PublisherClient } from '../../client';
import type { Publisher } from '../../types';
import { print, stringValue, type Command, type CommandInput } from '../command';
import { prepareConfigDir } from '../config';
import { CliError } from '../errors';
import { PASSWORD_HELP, readPassword } from '../password';
import { payoutProofSteps } from '../payout-proof-steps';
import { openSession } from '../session';
import { saveIssuedKey } from '../sign-in';
import { fields } from '../table';

const NO_PAYOUT = 'none (bots cannot pay your priced sites until you run `crawlgate payout set <address>`)';

export const me: Command = {
  name: 'me',
  usage: '',
  summary: 'Show your account: email, name, payout address',
  options: {},
  positionals: [],
  async run(input) {
    const { client } = await openSession(input.values, input.io);
    const publisher = await client.me();
    print(input, publisher, () =>
      fields([
        ['Publisher', publisher.publisher_id],
        ['Email', publisher.email],
        ['Name', publisher.name ?? ''],
        ['Payout address', payoutLine(publisher)],
        ['Created', publisher.created_at],
      ]),
    );
  },
};

function payoutLine(publisher: Publisher): string {
  if (publisher.payout_address === null) return NO_PAYOUT;
  return publisher.payout_address_proven
    ? `${publisher.payout_address} (proven: it signed for this account)`
    : publisher.payout_address;
}

const PAYOUT_HELP = `${PASSWORD_HELP}\nThe API asks for the account password (X-Confirm-Password) for every payout address change.`;

export const payoutSet: Command = {
  name: 'payout set',
  usage: '<address> [--proof <signature>] [--password <password>]',
  summary: 'Set the EVM address your sites are paid to (asks for the password)',
  help: [
    'The address is 0x and 40 hex digits; it is stored EIP-55 checksummed.',
    "An address another publisher names already needs --proof: the address's EIP-191 (personal_sign)",
    'signature of the text the API answers with (printed when it refuses), for example',
    "`cast wallet sign --private-key <key> '<text>'`. A proof takes the address from publishers",
    'that named it without one.',
    PAYOUT_HELP,
  ].join('\n'),
  options: { password: { type: 'string' }, proof: { type: 'string' } },
  positionals: ['address'],
  run: (input) => changePayout(input, input.args[0], stringValue(input.values, 'proof')),
};

export const payoutClear: Command = {
  name: 'payout clear',
  usage: '[--password <password>]',
  summary: 'Remove the payout address: priced sites stop charging (asks for the password)',
  help: PAYOUT_HELP,
  options: { password: { type: 'string' } },
  positionals: [],
  run: (input) => changePayout(input, null),
};

async function changePayout(input: CommandInput, address: string | null, proof?: string): Promise<void> {
  const { client } = await openSession(input.values, input.io);
  const password = await readPassword(stringValue(input.values, 'password'), input.io);
  const publisher = await client
    .updateMe({ payout_address: address, ...(proof === undefined ? {} : { payout_proof: proof }) }, { password })
    .catch(async (error: unknown) => {
      throw (await proofNeeded(error, address, client)) ?? error;
    });
  print(input, publisher, () =>
    publisher.payout_address === null
      ? `Payout address removed: ${NO_PAYOUT}.\n`
      : `Payout address set: ${publisher.payout_address}\n`,
  );
}

/**
 * The API's refusal of an address another publisher names, told as the steps that prove it. The
 * text to sign is built here for this account, never the API's text pasted into a command.
 */
async function proofNeeded(
  error: unknown,
  address: string | null,
  client: PublisherClient,
): Promise<CliError | undefined> {
  if (payoutProofMessageOf(error) === undefined || address === null) return undefined;
  const { publisher_id } = await client.me();
  return new CliError(payoutProofSteps(address, publisher_id));
}

export const apiKeyRotate: Command = {
  name: 'api-key rotate',
  usage: '[--show-key]',
  summary: 'Issue a new API key; the previous one stops working at once',
  help: [
    'With the saved key, the new one replaces it in the config file and is printed only with',
    '--show-key. With CRAWLGATE_API_KEY, the new key is printed (that is its only copy): put it',
    'where the old one was.',
  ].join('\n'),
  options: { 'show-key': { type: 'boolean' } },
  positionals: [],
  async run(input) {
    const session = await openSession(input.values, input.io);
    // Before the old key is retired: the new one must have somewhere to go.
    if (session.keyFrom === 'config') await prepareConfigDir(session.configPath);
    const issued = await session.client.rotateApiKey();
    if (session.keyFrom === 'config')
      return saveIssuedKey(input, session, issued, 'New API key saved; the previous one no longer works.');
    print(
      input,
      issued,
      () =>
        `New API key (the previous one, from CRAWLGATE_API_KEY, no longer works; shown only now):\n  ${issued.api_key}\n`,
    );
  },
};
