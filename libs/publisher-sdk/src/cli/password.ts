import { CliError } from './errors';
import type { CliIo } from './io';
import { promptHidden } from './prompt';

/** Said in the help of every command that takes the account password. */
export const PASSWORD_HELP = [
  'The password comes from --password, else CRAWLGATE_PASSWORD, else a prompt that does not echo',
  '(on a terminal). --password is visible to other users in the process list: prefer the others.',
].join('\n');

/**
 * The account password: --password, else CRAWLGATE_PASSWORD, else asked on the terminal (on
 * stderr, so --json output stays clean). `confirm` asks twice, for a new password.
 */
export async function readPassword(
  flag: string | undefined,
  io: CliIo,
  options: { confirm?: boolean } = {},
): Promise<string> {
  const given = flag ?? (io.env.CRAWLGATE_PASSWORD || undefined);
  if (given !== undefined) return given;
  if (!io.stdin?.isTTY)
    throw new CliError('No password: pass --password, set CRAWLGATE_PASSWORD, or run on a terminal to be prompted');
  const password = await promptHidden('Password: ', io.stdin, io.stderr);
  if (options.confirm && (await promptHidden('Repeat the password: ', io.stdin, io.stderr)) !== password) {
    throw new CliError('The two passwords differ; nothing was sent');
  }
  return password;
}
