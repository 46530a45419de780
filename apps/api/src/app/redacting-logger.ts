import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { urlRedactor } from '@crawlgate/core';

/**
 * What no log line may show, as one function: the RPC URL's path and query (where hosted providers
 * put their key) and any configured URL's password, each on its own from 6 characters and inside
 * the URL in every form a library prints it (core's urlRedactor). viem's errors quote the RPC URL,
 * and a 500's stack holds the message. A URL with nothing secret in it (a local node's, a Redis
 * without a password) is left as it is, and so are user names and database names.
 */
export function logRedactor(urls: {
  rpcUrl?: string;
  others?: readonly (string | undefined)[];
}): (text: string) => string {
  const redactors = [
    ...(holdsSecret(urls.rpcUrl, true) ? [urlRedactor(urls.rpcUrl!, { shortestPart: 6, username: false })] : []),
    ...(urls.others ?? [])
      .filter((url) => holdsSecret(url, false))
      .map((url) => urlRedactor(url!, { shortestPart: 6, username: false, path: false })),
  ];
  return (text) => redactors.reduce((shown, redact) => redact(shown), text);
}

/** A password, or (`pathIsSecret`) a path or query beyond "/". */
function holdsSecret(url: string | undefined, pathIsSecret: boolean): boolean {
  try {
    const parsed = url ? new URL(url) : undefined;
    if (!parsed) return false;
    const rest = `${parsed.pathname}${parsed.search}`;
    return parsed.password !== '' || (pathIsSecret && rest !== '' && rest !== '/');
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
