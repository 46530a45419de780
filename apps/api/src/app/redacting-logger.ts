import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/** How a hidden part reads in the logs. */
export const REDACTED = '[redacted]';
/** Shorter parts are not hidden: replacing them everywhere would garble unrelated text. */
const SHORTEST_HIDDEN = 6;

/**
 * The parts of configured URLs no log may show: a password in the user part of any of them, and
 * the path and query of the RPC URL, where hosted providers put their API key (`https://…/v2/<key>`).
 * viem's errors quote the RPC URL whole (less its user part) in their message, and a 500's stack
 * holds the message.
 */
export function secretPartsOf(urls: { rpcUrl?: string; others?: readonly (string | undefined)[] }): string[] {
  const parts: string[] = [];
  const read = (text: string | undefined) => {
    try {
      return text ? new URL(text) : undefined;
    } catch {
      return undefined;
    }
  };
  const rpc = read(urls.rpcUrl);
  if (rpc && `${rpc.pathname}${rpc.search}` !== '/') parts.push(`${rpc.pathname}${rpc.search}`);
  for (const url of [rpc, ...(urls.others ?? []).map(read)]) {
    if (!url?.password) continue;
    parts.push(url.password, decodeURIComponent(url.password));
  }
  return [...new Set(parts)].filter((part) => part.length >= SHORTEST_HIDDEN);
}

/** Nest's console logger, every line and stack trace with `hidden` parts replaced by REDACTED. */
export class RedactingLogger extends ConsoleLogger {
  constructor(
    private readonly hidden: readonly string[],
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

  private hide(text: string): string {
    let shown = text;
    for (const part of this.hidden) shown = shown.replaceAll(part, REDACTED);
    return shown;
  }
}
