import { readFile } from 'node:fs/promises';
import { CliError } from './errors';
import type { CliIo } from './io';

/** `--file -` reads standard input (to its end), as Unix tools do. */
export const STDIN = '-';

/** The text of `file`, or of standard input when it is `-`; failures say which and why. */
export async function readInputFile(file: string, io: CliIo): Promise<string> {
  if (file === STDIN) {
    if (!io.stdin) throw new CliError('Cannot read standard input');
    if (io.stdin.isTTY) io.stderr('Reading from standard input; end with Ctrl-D.\n');
    return readStream(io.stdin);
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  } catch (error) {
    throw new CliError(`Cannot read standard input: ${(error as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}
