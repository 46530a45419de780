import { parseArgs } from 'node:util';

export type CliCommand = { kind: 'stdio' } | { kind: 'http'; port: number } | { kind: 'help' } | { kind: 'version' };

/** A command line that cannot be run; the binary prints it with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage: crawlgate-mcp [--http <port>]

An MCP server whose tools read web pages, paying for them in USDC within limits.
  (no option)     speak MCP on stdin/stdout, for a host that starts this process
  --http <port>   serve MCP over streamable HTTP at http://127.0.0.1:<port>/mcp (0: any free port)
  --help, -h      this text
  --version, -v   the version

Configuration comes from the environment:
  CRAWLGATE_WALLET_KEY      required: the paying wallet's private key (0x + 64 hex digits)
  CRAWLGATE_MAX_PRICE_USD   required: the most paid for one page, e.g. 0.01
  CRAWLGATE_BUDGET_USD      required: the most paid while the server runs, e.g. 1
  CRAWLGATE_BUDGET_FILE     keep the budget in this file (an absolute path): it then holds across
                            restarts and for every server sharing the file
  CRAWLGATE_NETWORKS        what to pay with: a comma list (default base,base-sepolia), or JSON
                            such as [{"network":"local","asset":"0x…"}]
  CRAWLGATE_PAY_MODE        authorization (default) or transfer (needs CRAWLGATE_RPC_URL and gas)
  CRAWLGATE_RPC_URL         JSON-RPC endpoint, for transfer mode
  CRAWLGATE_MAX_CHARS       the most characters of page text in a result (default 20000)
  CRAWLGATE_USER_AGENT      the User-Agent sent to sites
  CRAWLGATE_HTTP_TOKEN      with --http: the bearer token every request must send (32 characters
                            at least; default a random one, printed at start)
  CRAWLGATE_ALLOW_PRIVATE_NETWORKS
                            true: also read pages on loopback, private and link-local addresses
                            (an intranet, a local demo). Default false: only public addresses,
                            redirects included, so a page cannot point the server at its own network
`;

export function parseCliArgs(argv: readonly string[]): CliCommand {
  let values: { http?: string; help?: boolean; version?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        http: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  if (values.http === undefined) return { kind: 'stdio' };
  const port = /^\d{1,5}$/.test(values.http) ? Number(values.http) : NaN;
  if (!(port >= 0 && port <= 65535))
    throw new UsageError(`--http takes a port from 0 to 65535, not ${JSON.stringify(values.http)}`);
  return { kind: 'http', port };
}
