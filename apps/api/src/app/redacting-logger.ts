import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { urlRedactor } from '@crawlgate/core';

/**
 * What no log line may show, as one function: each configured URL that holds a secret (the RPC
 * URL's path or query, where hosted providers put their key; any URL's password), in every form
 * a library prints it (core's urlRedactor). viem's errors quote the RPC URL, and a 500's stack
 * holds the message. A URL with nothing secret in it (a local node's) is left as it is.
 */
export function logRedactor(urls: readonly (string | undefined)[]): (text: string) => string {
  const redactors = urls.filter(holdsSecret).map(urlRedactor);
  return (text) => redactors.reduce((shown, redact) => redact(shown), text);
}

function holdsSecret(url: string | undefined): url is string {
  try {
    const parsed = url ? new URL(url) : undefined;
    return parsed !== undefined && (parsed.password !== '' || `${parsed.pathname}${parsed.search}` !== '/');
  } catch {
    return false;
  }
}

/** Nest's console logger, every line and stack trace passed through `hide` (logRedactor's). */
export class RedactingLogger extends ConsoleLogger {
  constructor(
    private readonly hide: (text: string) => string,
    logLevels: LogLevel[],
  ) {
    super({ logLevels });
  }

  protected override formatMessage(...args: Parameters<ConsoleLogger['formatMessage']>): string {
    return this.hide(super.formatMessage(...args));
  }

  protected override printStackTrace(stack: string): void {
    super.printStackTrace(stack && this.hide(stack));
  }
}
