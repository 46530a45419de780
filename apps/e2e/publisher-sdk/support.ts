import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { freshIp } from '../../../apps/api/test/fixtures';
import { main } from '../../../libs/publisher-sdk/src/cli/main';
import type { FetchLike } from '../../../libs/publisher-sdk/src/http';

/**
 * The global fetch, every request seeming to come from one fresh client address: register and
 * login are limited to 5 a minute per IP, and the test app trusts X-Forwarded-For.
 */
export function fetchFromFreshIp(): FetchLike {
  const ip = freshIp();
  return (input, init) =>
    fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-forwarded-for': ip } });
}

export const newEmail = () => `sdk-${randomUUID()}@example.com`;
export const newDomain = () => `${randomUUID().slice(0, 8)}.example.com`;
export const PASSWORD = 'correct horse battery';

/** A loopback URL where nothing listens (a port just released): connections are refused. */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** What GET …/pricing answers after a PUT of these (normalised) prices. */
export function pricingView(siteId: string, defaultPrice: string, rules: [path: string, price: string][]) {
  return {
    site_id: siteId,
    default_price_usd: defaultPrice,
    rules: rules.map(([path, price_usd]) => ({ path, price_usd })),
    version: expect.any(Number),
    updated_at: expect.any(String),
  };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in-process (main(argv, io)) with its config under `home()`, every request from a
 * fresh client address, and hands each run to `seen` (to check, say, that no output holds a key).
 */
export function cliRunner(home: () => string, seen: (args: string[], run: CliRun) => void = () => undefined) {
  return async (args: string[], env: Record<string, string> = {}, stdin?: NodeJS.ReadStream): Promise<CliRun> => {
    let stdout = '';
    let stderr = '';
    const code = await main(args, {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      env: { XDG_CONFIG_HOME: home(), HOME: home(), ...env },
      stdin,
      fetch: fetchFromFreshIp(),
    });
    const run = { code, stdout, stderr };
    seen(args, run);
    return run;
  };
}

/** A terminal's stdin as the CLI sees it: isTTY, raw mode accepted; the test types into it. */
export function fakeTerminal(): NodeJS.ReadStream & PassThrough {
  return Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode: () => undefined,
  }) as unknown as NodeJS.ReadStream & PassThrough;
}

/** Piped stdin holding `text` (not a terminal). */
export function pipedStdin(text: string): NodeJS.ReadStream {
  return Readable.from([Buffer.from(text)]) as unknown as NodeJS.ReadStream;
}
