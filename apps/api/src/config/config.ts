import {
  ACCESS_TOKEN_TTL_SECONDS,
  DEFAULT_GATE_TTL_SECONDS,
  isNetworkName,
  MAX_ACCESS_TOKEN_TTL_SECONDS,
  MIN_ACCESS_TOKEN_TTL_SECONDS,
  MAX_WITHDRAW_DELAY,
  MIN_WITHDRAW_DELAY,
  NETWORK_NAMES,
  type NetworkName,
} from '@crawlgate/core';
import { resolve } from 'node:path';
import { DEFAULT_SCRYPT_LOG_N } from '../crypto/password';

/** Everything the API reads from its environment, parsed once at start-up. */
export interface AppConfig {
  port: number;
  host: string;
  /** PostgreSQL URL; unset means embedded PGlite under `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** 32-byte key for AES-256-GCM of site secrets; unset means one generated into `dataDir`. */
  masterKey: string | undefined;
  redisUrl: string | undefined;
  accessTokenTtlSeconds: number;
  /** How long a rotated access-token secret still verifies tokens it signed. */
  secretGraceSeconds: number;
  bodyLimitBytes: number;
  /** How long a client may take to send a whole request (headers and body); 0 would let slow clients hold sockets forever. */
  requestTimeoutMs: number;
  /** Days of crawler analytics kept (counts and top paths per day); 0 keeps them all. */
  crawlerAnalyticsRetentionDays: number;
  /** Sites one publisher may hold: each carries secrets, caches and reports the API keeps. */
  maxSitesPerPublisher: number;
  /**
   * scrypt's cost (log2 N) for the password hashes the API makes: always 15 (OWASP's floor) from the
   * environment, so every account's login costs what the decoy of an unknown email does. Lower only in
   * the API's own test app.
   */
  passwordScryptLogN: number;
  /** Trust X-Forwarded-For (behind a load balancer): rate limits per IP then see the client's address. */
  /**
   * How many proxies in front append to X-Forwarded-For (0: none). The client is the address the
   * farthest of them appended, never an entry the client wrote itself.
   */
  trustProxyHops: number;
  logLevel: 'silent' | 'error' | 'warn' | 'info' | 'debug';
  chain: ChainConfig;
  /** How long an unpaid gate stays payable. */
  gateTtlSeconds: number;
  /** Base URL the API is reached at, for `verify_url`; required off `local`, where unset means taken from each request. */
  publicBaseUrl: string | undefined;
  /** The built publisher dashboard, served at /dashboard/ (`npm start` builds it there). */
  dashboardDir: string;
}

export interface ChainConfig {
  network: NetworkName;
  /** JSON-RPC endpoint; on `local` without one, `npm start` runs its own anvil. */
  rpcUrl: string | undefined;
  /** Overrides the network's USDC address (a test token on a local chain posing as Base Sepolia). */
  usdcAddress: `0x${string}` | undefined;
  /** Key of the account that pays gas to settle authorizations; on `local`, an anvil dev account. */
  relayerPrivateKey: `0x${string}` | undefined;
  confirmations: number;
  /** How many recent blocks are searched for a payment's chain events before the narrower searches (RECENT_LOG_BLOCKS). */
  recentLogBlocks: number;
  /** How long one JSON-RPC request may take before the API gives up on it (a broadcast then counts as maybe sent). */
  rpcTimeoutMs: number;
  /** How long a verify request waits for its settlement before answering 202 settlement_pending. */
  settlementTimeoutMs: number;
  /** How often the reconciler looks for unfinished settlements; 0 turns it off. */
  reconcileIntervalMs: number;
  /**
   * How long after its block a transfer that is not our relayer's waits before it pays the claim
   * holding its authorization (FOREIGN_SETTLEMENT_HOLD_SECONDS): its payer may name it for its own gate meanwhile.
   */
  foreignSettlementHoldSeconds: number;
  pollingIntervalMs: number;
  /** When a relayer transaction stuck under a fee spike is sent again at higher fees (fee-bump.ts). */
  feeBump: FeeBumpConfig;
  batchSettlement: BatchSettlementConfig;
}

/** Re-pricing a relayer transaction the chain's fees outgrew: its nonce holds every later one back. */
export interface FeeBumpConfig {
  /** How long a transaction stays pending before it is re-priced (RELAYER_BUMP_AFTER_SECONDS). */
  afterSeconds: number;
  /**
   * The most a relayer transaction offers per gas, in wei (RELAYER_MAX_FEE_PER_GAS_WEI): none is
   * first sent, or re-priced, above it; it waits for fees to fall. Every transaction but an urgent claim.
   */
  maxFeePerGas: bigint;
  /**
   * The same for an urgent claim, one of a channel whose pending withdrawal would take what it was
   * charged and nobody claimed (RELAYER_URGENT_MAX_FEE_PER_GAS_WEI; at least maxFeePerGas): held
   * past the withdraw delay, that money is the payer's again.
   */
  urgentMaxFeePerGas: bigint;
}

/** x402 batch-settlement: where the escrow is, who authorizes claims, and when the claimer claims. */
export interface BatchSettlementConfig {
  /** The escrow; default x402's canonical address (where `@x402/evm` clients sign for it). */
  escrow: `0x${string}` | undefined;
  /**
   * Signs claim batches as every channel's receiverAuthorizer (the relayer only relays them, so this
   * key needs no gas and the relayer's cannot claim). On `local`, an anvil dev account; elsewhere,
   * unset means sites cannot turn batch settlement on.
   */
  claimAuthorizerPrivateKey: `0x${string}` | undefined;
  /** The channels' withdraw delay, which is also the claimer's deadline once a payer starts a withdrawal. */
  withdrawDelaySeconds: number;
  /** How often the claimer runs; 0 turns it off. */
  claimIntervalMs: number;
  /** A receiver's channels are claimed once their unclaimed total reaches this (micro-USD)... */
  claimMinMicros: bigint;
  /** ...or once the oldest unclaimed voucher is this old, or a withdrawal is pending. */
  claimMaxAgeSeconds: number;
  /** Channels one claim transaction takes (its gas grows with each); a receiver with more is claimed over several. */
  claimMaxChannels: number;
  /**
   * How long a channel's chain state, once read, judges the next vouchers that fit it with no new
   * read; 0 reads for each, and so does an instance whose claimer is off, slower than a quarter of
   * the withdraw delay, or has not finished a run with gas for a claim in three of its intervals (ClaimerService.keepsUp).
   */
  channelStateReuseMs: number;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const chain = loadChainConfig(env);
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: env.HOST ?? '0.0.0.0',
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: resolve(env.CRAWLGATE_DATA_DIR ?? '.data'),
    masterKey: nonEmpty(env.CRAWLGATE_MASTER_KEY),
    redisUrl: nonEmpty(env.REDIS_URL),
    accessTokenTtlSeconds: integer(
      env,
      'ACCESS_TOKEN_TTL_SECONDS',
      ACCESS_TOKEN_TTL_SECONDS,
      MIN_ACCESS_TOKEN_TTL_SECONDS,
      MAX_ACCESS_TOKEN_TTL_SECONDS,
    ),
    secretGraceSeconds: integer(env, 'SECRET_GRACE_SECONDS', 3600, 0, 30 * 24 * 3600),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024, 16 * 1024 * 1024),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    // Longer than the widest range the API reads (366 days), so "the last year" is always whole.
    crawlerAnalyticsRetentionDays: integer(env, 'CRAWLER_ANALYTICS_RETENTION_DAYS', 400, 0, 36_500),
    maxSitesPerPublisher: integer(env, 'MAX_SITES_PER_PUBLISHER', 1_000, 1, 100_000),
    passwordScryptLogN: DEFAULT_SCRYPT_LOG_N,
    trustProxyHops: proxyHops(env),
    logLevel: oneOf(env, 'LOG_LEVEL', ['silent', 'error', 'warn', 'info', 'debug'] as const, 'info'),
    chain,
    gateTtlSeconds: integer(env, 'GATE_TTL_SECONDS', DEFAULT_GATE_TTL_SECONDS, 10, 24 * 3600),
    publicBaseUrl: publicBaseUrl(env, chain.network),
    dashboardDir: resolve(env.CRAWLGATE_DASHBOARD_DIR ?? 'dist/apps/dashboard'),
  };
}

function loadChainConfig(env: NodeJS.ProcessEnv): ChainConfig {
  const network = nonEmpty(env.CRAWLGATE_NETWORK) ?? 'local';
  if (!isNetworkName(network))
    throw new ConfigError(`CRAWLGATE_NETWORK must be one of ${NETWORK_NAMES.join(', ')}, got "${network}"`);
  const rpcUrl = nonEmpty(env.RPC_URL);
  if (network !== 'local' && !rpcUrl) throw new ConfigError(`RPC_URL is required on ${network}`);
  const relayerPrivateKey = hex(env, 'RELAYER_PRIVATE_KEY', 64);
  if (network !== 'local' && !relayerPrivateKey) throw new ConfigError(`RELAYER_PRIVATE_KEY is required on ${network}`);
  const withdrawDelaySeconds = integer(
    env,
    'BATCH_WITHDRAW_DELAY_SECONDS',
    86_400,
    MIN_WITHDRAW_DELAY,
    MAX_WITHDRAW_DELAY,
  );
  const claimIntervalMs = integer(env, 'CLAIM_INTERVAL_MS', 60_000, 0, 3_600_000);
  // A payer may withdraw what it was charged once the delay is over: the claimer must run well inside it.
  if (claimIntervalMs * 4 > withdrawDelaySeconds * 1000)
    throw new ConfigError(
      `CLAIM_INTERVAL_MS (${claimIntervalMs}) must be at most a quarter of BATCH_WITHDRAW_DELAY_SECONDS (${withdrawDelaySeconds} s): a payer withdraws what no claim collected within the delay`,
    );
  return {
    network,
    rpcUrl,
    usdcAddress: hex(env, 'USDC_ADDRESS', 40),
    relayerPrivateKey,
    confirmations: integer(env, 'CONFIRMATIONS', network === 'base' ? 2 : 1, 1, 64),
    recentLogBlocks: integer(env, 'RECENT_LOG_BLOCKS', 10_000, 10, 1_000_000),
    rpcTimeoutMs: integer(env, 'RPC_TIMEOUT_MS', 10_000, 1_000, 120_000),
    settlementTimeoutMs: integer(env, 'SETTLEMENT_TIMEOUT_MS', 30_000, 0, 600_000),
    reconcileIntervalMs: integer(env, 'RECONCILE_INTERVAL_MS', 5_000, 0, 3_600_000),
    foreignSettlementHoldSeconds: integer(env, 'FOREIGN_SETTLEMENT_HOLD_SECONDS', 120, 0, 86_400),
    pollingIntervalMs: integer(env, 'CHAIN_POLLING_MS', network === 'local' ? 50 : 1_000, 10, 60_000),
    feeBump: feeBumpConfig(env),
    batchSettlement: {
      escrow: hex(env, 'BATCH_SETTLEMENT_ADDRESS', 40),
      claimAuthorizerPrivateKey: hex(env, 'CLAIM_AUTHORIZER_PRIVATE_KEY', 64),
      withdrawDelaySeconds,
      claimIntervalMs,
      claimMinMicros: BigInt(integer(env, 'CLAIM_MIN_MICROS', 1_000_000, 1, Number.MAX_SAFE_INTEGER)),
      claimMaxAgeSeconds: integer(env, 'CLAIM_MAX_AGE_SECONDS', 3_600, 0, MAX_WITHDRAW_DELAY),
      claimMaxChannels: integer(env, 'CLAIM_MAX_CHANNELS', 100, 1, 100),
      // A minute at most: far inside the shortest withdraw delay, which a withdrawal started meanwhile waits out.
      channelStateReuseMs: integer(env, 'CHANNEL_STATE_REUSE_MS', 2_000, 0, 60_000),
    },
  };
}

/**
 * How many times the normal maximum fee an urgent claim may offer unless RELAYER_URGENT_MAX_FEE_PER_GAS_WEI
 * says otherwise: 100 gwei by default, which Base has not charged for minutes on end, let alone for a
 * withdraw delay (15 minutes at least); a one-channel claim (~75k gas, more with each channel) at it
 * costs under 0.01 ETH, spent only while a withdrawal would otherwise take money already charged.
 */
const URGENT_FEE_FACTOR = 10n;

function feeBumpConfig(env: NodeJS.ProcessEnv): FeeBumpConfig {
  // 10 gwei: far above Base's usual fees, and a settlement (~80k gas) at it costs under 0.001 ETH.
  const maxFeePerGas = BigInt(integer(env, 'RELAYER_MAX_FEE_PER_GAS_WEI', 10_000_000_000, 1, Number.MAX_SAFE_INTEGER));
  const urgentMaxFeePerGas =
    nonEmpty(env.RELAYER_URGENT_MAX_FEE_PER_GAS_WEI) === undefined
      ? maxFeePerGas * URGENT_FEE_FACTOR
      : BigInt(integer(env, 'RELAYER_URGENT_MAX_FEE_PER_GAS_WEI', 0, 1, Number.MAX_SAFE_INTEGER));
  if (urgentMaxFeePerGas < maxFeePerGas)
    throw new ConfigError(
      `RELAYER_URGENT_MAX_FEE_PER_GAS_WEI (${urgentMaxFeePerGas}) must be at least RELAYER_MAX_FEE_PER_GAS_WEI (${maxFeePerGas}): an urgent claim is never held by less than any other relayer transaction`,
    );
  return { afterSeconds: integer(env, 'RELAYER_BUMP_AFTER_SECONDS', 30, 0, 3_600), maxFeePerGas, urgentMaxFeePerGas };
}

/**
 * Off `local`, verify_url must not be built from a request's Host header, which the client
 * chooses: a gate body would send agents (and their payment proofs) wherever the header says.
 */
function publicBaseUrl(env: NodeJS.ProcessEnv, network: NetworkName): string | undefined {
  const raw = nonEmpty(env.PUBLIC_BASE_URL);
  if (raw === undefined) {
    if (network !== 'local')
      throw new ConfigError(`PUBLIC_BASE_URL is required on ${network} (the API's public base URL, for verify_url)`);
    return undefined;
  }
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || !/^https?:$/.test(url.protocol) || /[?#]/.test(raw)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL with no query or fragment, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

function hex(env: NodeJS.ProcessEnv, name: string, digits: number): `0x${string}` | undefined {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return undefined;
  if (!new RegExp(`^0x[0-9a-fA-F]{${digits}}$`).test(raw))
    throw new ConfigError(`${name} must be 0x followed by ${digits} hex digits`);
  return raw as `0x${string}`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** TRUST_PROXY: a count of proxies; "true" is one and "false" none, as they read before it was a count. */
function proxyHops(env: NodeJS.ProcessEnv): number {
  const value = env.TRUST_PROXY?.trim().toLowerCase();
  if (value === 'true') return 1;
  if (value === 'false') return 0;
  return integer(env, 'TRUST_PROXY', 0, 0, 10);
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/**
 * A configured URL as the logs may show it: scheme, host and port. Hosted RPC providers put their
 * API key in the path (`https://…/v2/<key>`) and some a password in the user part.
 */
export function loggableUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(unreadable URL)';
  }
}
