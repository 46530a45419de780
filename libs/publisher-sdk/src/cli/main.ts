#!/usr/bin/env node
import packageJson from '../../package.json';
import { parseCommandLine, type Command } from './command';
import { apiKeyRotate, me, payoutClear, payoutSet } from './commands/account';
import { botsReset, botsSet } from './commands/bots';
import { completionCommand } from './commands/completion';
import { login } from './commands/login';
import { payments } from './commands/payments';
import { policySet, policyShow } from './commands/policy';
import { pricingSet, pricingShow } from './commands/pricing';
import { register } from './commands/register';
import { sitesCreate, sitesDelete, sitesList, sitesRotateSecret, sitesRotateToken } from './commands/sites';
import { stats } from './commands/stats';
import { UsageError } from './errors';
import { commandHelp, groupHelp, topHelp } from './help';
import { processIo, type CliIo } from './io';
import { terminalSafe } from '@crawlgate/core';
import { reportFailure } from './report';

// In the order of a publisher's first session; help and completion list them so.
const COMMANDS: Command[] = [
  register,
  login,
  me,
  payoutSet,
  payoutClear,
  apiKeyRotate,
  sitesCreate,
  sitesList,
  sitesDelete,
  sitesRotateToken,
  sitesRotateSecret,
  pricingSet,
  pricingShow,
  policyShow,
  policySet,
  botsSet,
  botsReset,
  payments,
  stats,
  completionCommand(() => COMMANDS),
];

/** Runs one command line and resolves to its exit code; never throws, never exits the process. */
export async function main(argv: readonly string[], io: Partial<CliIo> = {}): Promise<number> {
  const given: CliIo = { ...processIo(), ...io };
  // What the API (or a site, through it) says is printed: never a sequence the terminal would act on.
  const cli: CliIo = {
    ...given,
    stdout: (text) => given.stdout(terminalSafe(text)),
    stderr: (text) => given.stderr(terminalSafe(text)),
  };
  try {
    await run([...argv], cli);
    return 0;
  } catch (error) {
    return reportFailure(error, cli, argv.includes('--json'));
  }
}

async function run(argv: string[], io: CliIo): Promise<void> {
  const [first, second] = argv;
  if (first === '--help' || first === '-h' || first === 'help')
    return io.stdout(topHelp(COMMANDS, packageJson.version));
  if (first === '--version' || first === '-v') return io.stdout(`${packageJson.version}\n`);
  if (first === undefined) {
    io.stderr(topHelp(COMMANDS, packageJson.version));
    throw new UsageError('No command given');
  }

  const command = COMMANDS.find((c) => c.name === `${first} ${second}`) ?? COMMANDS.find((c) => c.name === first);
  if (command === undefined) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
    if (group.length === 0) throw new UsageError(`Unknown command "${first}"`);
    if (second === '--help' || second === '-h') return io.stdout(groupHelp(first, group));
    throw new UsageError(
      second === undefined
        ? `${first} needs a command: ${names(group)}`
        : `Unknown command "${first} ${second}"; try ${names(group)}`,
      first,
    );
  }

  const { values, args } = parseCommandLine(command, argv.slice(command.name.split(' ').length));
  if (values.help) return io.stdout(commandHelp(command));
  await command.run({ values, args, io });
}

function names(group: Command[]): string {
  return group.map((c) => c.name.split(' ')[1]).join(', ');
}

// Run when executed as the `crawlgate` binary; stay inert when imported (tests call main()).
if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
