/*
 * The server's configuration, read once from the environment at start-up. Everything that spends
 * money must be set explicitly (the wallet and both limits); a missing or malformed value stops
 * the start with one message listing every problem. The wallet key never leaves this module as
 * text: what goes on is the viem account (which cannot be printed back into the key) and a
 * redactor that blanks the key out of output.
 */

import { formatMicrosUsd, literalRedactor, MAX_PRICE_MICROS, parseUsdAmount, urlRedactor } from '@crawlgate/core';
import type { AllowedNetwork } from '@crawlgate/agent';
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import packageJson from '../package.json';
import { parseNetworksSetting } from './networks-setting';
import { secretRedactor } from './redact';

export type Env = Record<string, string | undefined>;

export interface McpConfig {
  /** The paying wallet. */
  account: PrivateKeyAccount;
  /** Blanks the wallet key out of a text. */
  redact: (text: string) => string;
  /** The most paid for one page, in USD (a minimal decimal string). */
  maxPriceUsd: string;
  /** The most paid while the server runs, in USD; with budgetFile, the most paid in all by every server on that file. */
  budgetUsd: string;
  /** The most one site takes while the server runs, in USD; undefined: no cap but the budget. */
  maxSpendPerSiteUsd: string | undefined;
  /** Where spending is kept across restarts and between servers (an absolute path); undefined: this process's memory. */
  budgetFile: string | undefined;
  /** What the agent pays with. */
  networks: AllowedNetwork[];
  payMode: 'authorization' | 'transfer';
  rpcUrl: string | undefined;
  /** Sent with every request: sites charge crawlers, so the server says it is one. */
  userAgent: string;
  /** The most characters of page text a tool result carries. */
  maxChars: number;
  /** With --http: the bearer token every request must send; undefined: a random one made at start. */
  httpToken: string | undefined;
  /**
   * Whether pages on loopback, private, link-local and other non-public addresses are read. Off by
   * default: a page's text reaches the assistant, so a page (or its redirect) that names
   * http://169.254.169.254/ or http://127.0.0.1:… would have the server read its own machine and network.
   */
  allowPrivateNetworks: boolean;
  /** CRAWLGATE_… variables that are none of these settings (a misspelt CRAWLGATE_BUDGET_FILE would silently keep the budget per process). */
  unknownSettings: string[];
}

/** Every variable readConfig reads. */
const SETTINGS = new Set([
  'CRAWLGATE_WALLET_KEY',
  'CRAWLGATE_MAX_PRICE_USD',
  'CRAWLGATE_BUDGET_USD',
  'CRAWLGATE_MAX_SPEND_PER_SITE_USD',
  'CRAWLGATE_BUDGET_FILE',
  'CRAWLGATE_NETWORKS',
  'CRAWLGATE_PAY_MODE',
  'CRAWLGATE_RPC_URL',
  'CRAWLGATE_MAX_CHARS',
  'CRAWLGATE_USER_AGENT',
  'CRAWLGATE_HTTP_TOKEN',
  'CRAWLGATE_ALLOW_PRIVATE_NETWORKS',
]);

/** The configuration cannot be used; `problems` are sentences naming the variable, never its secret value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`crawlgate-mcp cannot start:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

export const VERSION: string = packageJson.version;
/** Self-declared (a URL in the User-Agent): the middleware classes it as a crawler and charges it, as it should. */
export const DEFAULT_USER_AGENT = `CrawlgateMCP/${VERSION} (AI assistant fetcher; +https://www.npmjs.com/package/@crawlgate/mcp)`;
/** The agent SDK's own default: USDC on Base and Base Sepolia. */
export const DEFAULT_NETWORKS = 'base,base-sepolia';
/** About 5,000 tokens of English: a page's worth without flooding the assistant's context. */
export const DEFAULT_MAX_CHARS = 20_000;
const MAX_MAX_CHARS = 1_000_000;
/** An HTTP bearer token must be at least this long: it is all that stands between a local process and the wallet. */
export const MIN_HTTP_TOKEN_LENGTH = 32;
/** The agent SDK's sanity bound on a budget: 1,000,000 USD. */
const MAX_BUDGET_MICROS = 1_000_000_000_000n;
const KEY = /^(?:0x)?[0-9a-fA-F]{64}$/;

export function readConfig(env: Env): McpConfig {
  const problems: string[] = [];
  const value = (name: string) => {
    const text = env[name]?.trim();
    return text === '' ? undefined : text;
  };

  const account = readAccount(value('CRAWLGATE_WALLET_KEY'), problems);
  const maxPriceUsd = readUsd(
    'CRAWLGATE_MAX_PRICE_USD',
    value('CRAWLGATE_MAX_PRICE_USD'),
    MAX_PRICE_MICROS,
    'the most to pay for one page, e.g. 0.01',
    problems,
  );
  const budgetUsd = readUsd(
    'CRAWLGATE_BUDGET_USD',
    value('CRAWLGATE_BUDGET_USD'),
    MAX_BUDGET_MICROS,
    'the most to pay while the server runs (or in all, with CRAWLGATE_BUDGET_FILE), e.g. 1',
    problems,
  );
  const perSiteText = value('CRAWLGATE_MAX_SPEND_PER_SITE_USD');
  const maxSpendPerSiteUsd =
    perSiteText === undefined
      ? undefined
      : readUsd(
          'CRAWLGATE_MAX_SPEND_PER_SITE_USD',
          perSiteText,
          MAX_BUDGET_MICROS,
          'the most one site takes',
          problems,
        );
  const budgetFile = value('CRAWLGATE_BUDGET_FILE');
  // Absolute: an MCP host starts the server in a working directory of its choosing.
  if (budgetFile !== undefined && !isAbsolute(budgetFile))
    problems.push('CRAWLGATE_BUDGET_FILE must be an absolute path, e.g. /home/me/.crawlgate-budget.json');

  const networks = parseNetworksSetting(value('CRAWLGATE_NETWORKS') ?? DEFAULT_NETWORKS);
  if ('problem' in networks)
    problems.push(
      `CRAWLGATE_NETWORKS ${networks.problem}: use a comma list (base,base-sepolia) or JSON ([{"network":"local","asset":"0x…"}])`,
    );

  const payMode = value('CRAWLGATE_PAY_MODE') ?? 'authorization';
  if (payMode !== 'authorization' && payMode !== 'transfer')
    problems.push(`CRAWLGATE_PAY_MODE must be "authorization" or "transfer", not ${JSON.stringify(payMode)}`);
  const rpcUrl = value('CRAWLGATE_RPC_URL');
  if (rpcUrl !== undefined && !/^https?:$/.test(URL.canParse(rpcUrl) ? new URL(rpcUrl).protocol : ''))
    problems.push('CRAWLGATE_RPC_URL must be an http(s) URL');
  if (payMode === 'transfer' && rpcUrl === undefined)
    problems.push(
      'CRAWLGATE_RPC_URL is not set: CRAWLGATE_PAY_MODE=transfer sends USDC itself and needs a JSON-RPC endpoint',
    );

  const httpToken = value('CRAWLGATE_HTTP_TOKEN');
  if (httpToken !== undefined && httpToken.length < MIN_HTTP_TOKEN_LENGTH)
    problems.push(`CRAWLGATE_HTTP_TOKEN must be at least ${MIN_HTTP_TOKEN_LENGTH} characters`);

  const allowPrivateNetworks = readSwitch(value('CRAWLGATE_ALLOW_PRIVATE_NETWORKS'));
  if (allowPrivateNetworks === undefined) problems.push('CRAWLGATE_ALLOW_PRIVATE_NETWORKS must be "true" or "false"');

  const maxCharsText = value('CRAWLGATE_MAX_CHARS') ?? String(DEFAULT_MAX_CHARS);
  const maxChars = /^\d{1,7}$/.test(maxCharsText) ? Number(maxCharsText) : NaN;
  if (!(maxChars >= 1 && maxChars <= MAX_MAX_CHARS))
    problems.push(`CRAWLGATE_MAX_CHARS must be a whole number from 1 to ${MAX_MAX_CHARS}`);

  if (
    problems.length > 0 ||
    !account ||
    maxPriceUsd === undefined ||
    budgetUsd === undefined ||
    'problem' in networks ||
    allowPrivateNetworks === undefined
  )
    throw new ConfigError(problems);
  const redactUrl = rpcUrl === undefined ? undefined : urlRedactor(rpcUrl);
  const withoutUrl = redactUrl ? (text: string) => redactUrl(account.redact(text)) : account.redact;
  // The budget file's path names the user who runs the server (its home directory): the budget
  // store's errors quote it, and a refusal would hand it to the assistant.
  const withoutPath = literalRedactor(
    budgetFile === undefined ? [] : spellingsOfPath(budgetFile),
    '<CRAWLGATE_BUDGET_FILE>',
  );
  const redact = (text: string) => withoutPath(withoutUrl(text));
  return {
    ...account,
    redact,
    maxPriceUsd,
    budgetUsd,
    maxSpendPerSiteUsd,
    budgetFile,
    networks: networks.networks,
    payMode: payMode as McpConfig['payMode'],
    rpcUrl,
    userAgent: value('CRAWLGATE_USER_AGENT') ?? DEFAULT_USER_AGENT,
    maxChars,
    httpToken,
    allowPrivateNetworks,
    unknownSettings: Object.keys(env).filter(
      (name) => name.toUpperCase().startsWith('CRAWLGATE_') && !SETTINGS.has(name),
    ),
  };
}

/** An on/off setting: unset is off; undefined for anything but true/false (or 1/0). */
function readSwitch(text: string | undefined): boolean | undefined {
  if (text === undefined || /^(?:false|0)$/i.test(text)) return false;
  return /^(?:true|1)$/i.test(text) ? true : undefined;
}

/** The account and its redactor; problems never quote the value, which may be most of a key. */
function readAccount(key: string | undefined, problems: string[]): Pick<McpConfig, 'account' | 'redact'> | undefined {
  if (key === undefined) {
    problems.push(
      'CRAWLGATE_WALLET_KEY is not set: the private key (0x followed by 64 hex digits) of the wallet that pays',
    );
    return undefined;
  }
  if (!KEY.test(key)) {
    problems.push('CRAWLGATE_WALLET_KEY is not a private key: expected 0x followed by 64 hex digits');
    return undefined;
  }
  const hex = `0x${key.replace(/^0x/, '').toLowerCase()}` as const;
  try {
    return { account: privateKeyToAccount(hex), redact: secretRedactor(hex) };
  } catch {
    // Out of the curve's range (zero, say); viem's message is not passed on, in case it quotes the key.
    problems.push('CRAWLGATE_WALLET_KEY is not a valid secp256k1 private key');
    return undefined;
  }
}

function readUsd(
  name: string,
  text: string | undefined,
  max: bigint,
  meaning: string,
  problems: string[],
): string | undefined {
  if (text === undefined) {
    problems.push(`${name} is not set: ${meaning} (USD)`);
    return undefined;
  }
  const parsed = parseUsdAmount(text, max);
  if (!parsed.ok) {
    problems.push(`${name}: ${parsed.msg}`);
    return undefined;
  }
  return formatMicrosUsd(parsed.micros);
}

/**
 * A path as the budget store may quote it (through symbolic links: its real path) and as JSON
 * writes it (a tool result is redacted as JSON text: "C:\\Users" there).
 */
function spellingsOfPath(path: string): string[] {
  const forms = new Set([path]);
  try {
    forms.add(realpathSync(path));
  } catch {
    try {
      forms.add(join(realpathSync(dirname(path)), basename(path)));
    } catch {
      // Neither the file nor its folder is there yet: the store will say so, in the path as given.
    }
  }
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms];
}
