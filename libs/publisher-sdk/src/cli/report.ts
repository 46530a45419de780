import { ApiError, describeDetail } from '../errors';
import type { ValidationItem } from '../types';
import { UsageError } from './errors';
import type { CliIo } from './io';

/** Prints a failure to stderr and returns the exit code: 2 for a bad command line, else 1. */
export function reportFailure(error: unknown, io: CliIo, json: boolean): number {
  if (error instanceof UsageError) {
    io.stderr(
      `error: ${error.message}\nRun \`crawlgate ${error.command ? `${error.command} ` : ''}--help\` for usage.\n`,
    );
    return 2;
  }
  if (error instanceof ApiError) {
    io.stderr(json ? `${JSON.stringify({ status: error.status, detail: error.detail })}\n` : describeApiError(error));
    return 1;
  }
  io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
}

function describeApiError(error: ApiError): string {
  if (error.items)
    return `error: the API rejected the request (HTTP ${error.status}):\n${error.items.map(describeItem).join('')}`;
  const hint = error.status === 401 ? '\nLog in again with `crawlgate login`, or check CRAWLGATE_API_KEY.' : '';
  const status = error.status === 0 ? '' : ` (HTTP ${error.status})`;
  return `error: ${describeDetail(error.detail)}${status}${hint}\n`;
}

function describeItem(item: ValidationItem): string {
  const input = item.input === undefined ? '' : `, got ${truncate(JSON.stringify(item.input))}`;
  return `  ${item.loc.join('.')}: ${item.msg} [${item.type}${input}]\n`;
}

function truncate(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
