import type { FetchLike } from '../http';

/** Everything the CLI touches outside itself, so tests can run main() in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Read for the password prompt, only when it is a TTY. */
  stdin?: NodeJS.ReadStream;
  fetch?: FetchLike;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    stdin: process.stdin,
  };
}
