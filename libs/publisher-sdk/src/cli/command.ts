import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors';
import type { CliIo } from './io';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;
/** Parsed options: a string, a flag, or the strings of an option given `multiple: true`. */
export type Values = Record<string, string | boolean | string[] | undefined>;

/** Accepted by every command. */
export const GLOBAL_OPTIONS = {
  api: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} satisfies OptionSpec;

export interface CommandInput {
  values: Values;
  /** Named as in Command.positionals, then Command.optionalPositionals given, in order. */
  args: string[];
  io: CliIo;
}

export interface Command {
  /** The words that select it, e.g. "sites create". */
  name: string;
  /** Shown after the name in usage lines, e.g. "<domain> [--name <name>]". */
  usage: string;
  summary: string;
  /** Extra help text: options and notes. */
  help?: string;
  options: OptionSpec;
  positionals: string[];
  /** May follow `positionals`, or be left out (shown as "[<name>]"). */
  optionalPositionals?: string[];
  /** The values the first positional takes, when it is one of a few words (offered by shell completion). */
  choices?: string[];
  run(input: CommandInput): Promise<void>;
}

/** Strict parsing: an unknown option or a missing argument is a usage error, never ignored. */
export function parseCommandLine(command: Command, argv: string[]): { values: Values; args: string[] } {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    }) as typeof parsed;
  } catch (error) {
    throw new UsageError((error as Error).message, command.name);
  }
  const { values, positionals } = parsed;
  const optional = command.optionalPositionals ?? [];
  const fits =
    positionals.length >= command.positionals.length &&
    positionals.length <= command.positionals.length + optional.length;
  if (!values.help && !fits) {
    const expected = positionalsUsage(command) || 'no arguments';
    throw new UsageError(
      // Counted, not quoted: an argument in the wrong place may be a password.
      `Expected ${expected}, got ${positionals.length === 0 ? 'none' : positionals.length}`,
      command.name,
    );
  }
  return { values, args: positionals };
}

/** "<site> [<name>]": a command's positionals as usage lines show them. */
export function positionalsUsage(command: Pick<Command, 'positionals' | 'optionalPositionals'>): string {
  return [
    ...command.positionals.map((name) => `<${name}>`),
    ...(command.optionalPositionals ?? []).map((name) => `[<${name}>]`),
  ].join(' ');
}

/** The table of results: --json prints the API's answer as is, otherwise the readable form. */
export function print(input: CommandInput, data: unknown, text: () => string): void {
  input.io.stdout(input.values.json ? `${JSON.stringify(data, null, 2)}\n` : text());
}

export function stringValue(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** Every value of an option declared with `multiple: true`, in the order given. */
export function stringList(values: Values, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value : [];
}
