import { positionalsUsage, type Command } from './command';

const GLOBAL_HELP = `Options of every command:
  --api <url>   The Crawlgate API (default: CRAWLGATE_API_URL, else the URL saved by login)
  --json        Print the API's JSON answer instead of a table
  -h, --help    Show help
`;

const FOOTER = `Environment: CRAWLGATE_API_URL, CRAWLGATE_API_KEY (used instead of the saved key),
CRAWLGATE_PASSWORD (login, register, payout), XDG_CONFIG_HOME (where config.json lives).
Exit codes: 0 done, 1 failed (the API's detail on stderr), 2 bad command line.
`;

export function topHelp(commands: Command[], version: string): string {
  // Positionals only here; each command's --help shows its options.
  const lines = commands.map(
    (command) => [`${command.name} ${positionalsUsage(command)}`.trim(), command.summary] as const,
  );
  const width = Math.max(...lines.map(([usage]) => usage.length));
  return (
    `crawlgate ${version}: manage your Crawlgate sites, prices and revenue.\n\n` +
    'Usage: crawlgate <command> [options]\n\nCommands:\n' +
    lines.map(([usage, summary]) => `  ${usage.padEnd(width)}  ${summary}\n`).join('') +
    `\n${GLOBAL_HELP}\n${FOOTER}`
  );
}

export function commandHelp(command: Command): string {
  const usage = `Usage: crawlgate ${`${command.name} ${command.usage}`.trim()} [--api <url>] [--json]\n`;
  return `${command.summary}.\n\n${usage}${command.help ? `\n${command.help}\n` : ''}\n${GLOBAL_HELP}`;
}

/** `crawlgate sites --help`: the commands of one group. */
export function groupHelp(group: string, commands: Command[]): string {
  return (
    commands
      .map((command) => `crawlgate ${`${command.name} ${command.usage}`.trim()}\n    ${command.summary}\n`)
      .join('') + `\nRun \`crawlgate ${group} <command> --help\` for details.\n`
  );
}
