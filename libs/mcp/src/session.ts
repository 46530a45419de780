/*
 * One wallet, its limits and what it has spent: the state every MCP connection of a server
 * shares. The budget belongs to the process, not to a connection, so a host cannot get a fresh
 * budget by connecting again (over HTTP, each request may be a new connection).
 */

import { parseUsdAmount, terminalSafe } from '@crawlgate/core';
import {
  allowList,
  createAgent,
  createFileBudgetStore,
  type Agent,
  type Allowed,
  type AllowedNetwork,
} from '@crawlgate/agent';
import { publicAddressFetch } from '@crawlgate/middleware/node';
import { ConfigError, type McpConfig } from './config';
import { PaymentLedger } from './payments-ledger';

export interface WalletSession {
  /** The paying wallet's address (public: it is on every payment). */
  address: `0x${string}`;
  agent: Agent;
  ledger: PaymentLedger;
  maxPriceUsd: string;
  maxPriceMicros: bigint;
  budgetUsd: string;
  /**
   * Whether the chain can be asked (CRAWLGATE_RPC_URL) what became of a payment a site refused but
   * holds: its reservation ends once its authorization expired unused. Without, it stays reserved,
   * and a budget file counts it spent once this process is gone: nothing can tell it was not settled.
   */
  refusalsChecked: boolean;
  networks: readonly AllowedNetwork[];
  /** `networks` as the agent checks an offer against them (chain, token, EIP-712 domain): a quote chooses as it does. */
  allowed: readonly Allowed[];
  /** Sent with every request to a site: who we are (a crawler, which sites charge) and what we read. */
  headers: Record<string, string>;
  maxChars: number;
  /** Unpaid requests (quotes, pay.json); the agent's paid ones go through the same. */
  fetch: typeof fetch;
  /** Blanks the wallet key out of a text. */
  redact(text: string): string;
  /** One line for the operator (stderr in the binary), the key blanked out. */
  log(line: string): void;
  /**
   * The budget left, in micro-USD and as USD: what is not spent nor reserved by a payment under
   * way, every server on a budget file included (read from the file, not as this process last saw it).
   */
  remaining(): Promise<{ micros: bigint; usd: string }>;
}

export interface SessionOptions {
  log?: (line: string) => void;
  /**
   * Every request to a site (pages, redirects, payments, quotes). Default: one that reaches public
   * addresses only (publicAddressFetch), or, with CRAWLGATE_ALLOW_PRIVATE_NETWORKS, the global fetch.
   */
  fetch?: typeof fetch;
}

/** The agent's option names, as the variables that set them. */
/** Text first: the tools return text, and a binary body is not read. */
const ACCEPT = 'text/html, text/plain;q=0.9, application/json;q=0.9, */*;q=0.5';

const VARIABLES: Record<string, string> = {
  networks: 'CRAWLGATE_NETWORKS',
  maxPriceUsd: 'CRAWLGATE_MAX_PRICE_USD',
  budgetUsd: 'CRAWLGATE_BUDGET_USD',
};

export function createWalletSession(config: McpConfig, options: SessionOptions = {}): WalletSession {
  const write = options.log ?? (() => undefined);
  // Lines quote sites and the model (a URL argument, a refusal's detail): nothing the operator's terminal would act on.
  const log = (line: string) => write(terminalSafe(config.redact(line)));
  const ledger = new PaymentLedger();
  const refusalsChecked = config.rpcUrl !== undefined;
  // The URLs come from the assistant, and through it from the pages it read: by default no request,
  // nor a redirect hop, reaches this machine or its network (checked on the addresses connected to).
  const fetch = options.fetch ?? (config.allowPrivateNetworks ? globalThis.fetch : publicAddressFetch());
  let agent: Agent;
  try {
    agent = createAgent({
      account: config.account,
      maxPriceUsd: config.maxPriceUsd,
      budgetUsd: config.budgetUsd,
      maxSpendPerSiteUsd: config.maxSpendPerSiteUsd,
      // A file: the budget holds across restarts and between servers sharing it, atomically.
      budgetStore: config.budgetFile === undefined ? undefined : createFileBudgetStore(config.budgetFile),
      networks: config.networks,
      payMode: config.payMode,
      rpcUrl: config.rpcUrl,
      fetch,
      onPayment: (event) => {
        ledger.record(event);
        log(
          `crawlgate-mcp: paid ${event.priceUsd} USD for ${event.url} on ${event.network}${event.txHash ? ` (tx ${event.txHash})` : ''}`,
        );
      },
      onUnconfirmedPayment: (event) => {
        ledger.recordUnconfirmed(event);
        log(
          `crawlgate-mcp: ${event.status === 'held' ? 'refused, but the site holds' : 'sent, no answer for'} a payment of ${event.priceUsd} USD to ${event.payTo} for ${event.url} on ${event.network}${event.status === 'held' && !refusalsChecked ? `; it stays reserved from the budget: ${UNCHECKED_REFUSALS}` : ''}`,
        );
      },
    });
  } catch (error) {
    // The agent checks networks (known chains, asset addresses) itself: its refusal is a configuration problem.
    if (!(error instanceof RangeError)) throw error;
    const option = /^(\w+):/.exec(error.message)?.[1] ?? '';
    throw new ConfigError([
      VARIABLES[option] ? `${VARIABLES[option]}${error.message.slice(option.length)}` : error.message,
    ]);
  }
  return {
    address: config.account.address,
    agent,
    ledger,
    maxPriceUsd: config.maxPriceUsd,
    maxPriceMicros: usdMicros(config.maxPriceUsd),
    budgetUsd: config.budgetUsd,
    refusalsChecked,
    networks: config.networks,
    allowed: allowList(config.networks),
    headers: { 'user-agent': config.userAgent, accept: ACCEPT },
    maxChars: config.maxChars,
    fetch,
    redact: config.redact,
    log,
    remaining: async () => {
      const { remainingUsd } = await agent.spending();
      return { micros: usdMicros(remainingUsd), usd: remainingUsd };
    },
  };
}

/** An amount this package wrote itself (a minimal decimal string), in micro-USD. */
function usdMicros(usd: string): bigint {
  const parsed = parseUsdAmount(usd, BigInt(Number.MAX_SAFE_INTEGER));
  if (!parsed.ok) throw new RangeError(`${usd}: ${parsed.msg}`);
  return parsed.micros;
}

/** One line saying who pays, how much at most, and with what; for the operator at start-up. */
export function describeSession(session: WalletSession): string {
  const networks = session.networks
    .map((entry) => (typeof entry === 'string' ? entry : `${entry.network} (${entry.asset})`))
    .join(', ');
  const refusals = session.refusalsChecked
    ? ''
    : `; a payment a site refuses stays reserved from the budget: ${UNCHECKED_REFUSALS}`;
  return `crawlgate-mcp: wallet ${session.address}, at most ${session.maxPriceUsd} USD a page, budget ${session.budgetUsd} USD, networks ${networks}${refusals}`;
}

/** Why a refused payment's reservation never ends without an RPC URL (WalletSession.refusalsChecked). */
const UNCHECKED_REFUSALS =
  'with no CRAWLGATE_RPC_URL nothing can see its authorization expire unused (with a budget file, it counts as spent once this server stops); set CRAWLGATE_RPC_URL to the network’s node to free it';
