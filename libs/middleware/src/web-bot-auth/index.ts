/*
 * Web Bot Auth for the gate: one verifier per gate, its key directories and replay memory
 * bounded as the options say. See verify-request.ts for what is checked.
 */

import { BOT_CATALOGUE_ENTRIES, MAX_WEB_BOT_AUTH_LIFETIME_SECONDS, signatureAgentOrigin } from '@crawlgate/core';
import { createKeyDirectory } from './key-directory';
import { createNonceMemory } from './nonce-memory';
import type { ReplayStore } from './replay-store';
import { createSignatureVerifier, siteAuthority, type SignatureCheck, type SignedRequest } from './verify-request';
import type { HeaderRecord } from '../request-headers';

export { claimsSignature, type SignatureCheck } from './verify-request';
export { redisReplayStore, type RedisReplayStoreOptions, type RedisSetClient, type ReplayStore } from './replay-store';

export interface WebBotAuthOptions {
  /**
   * The site's other hosts a signature may be made for, besides its domain in Crawlgate (a www.
   * alias, a CDN name): host[:port], compared case-insensitively without :443/:80. A signature made
   * for any other host does not verify.
   */
  hosts?: readonly string[];
  /** How long a signed request waits for a key directory not cached yet; default 1000 ms. Past it, the request is unverified. */
  directoryTimeoutMs?: number;
  /** Largest key directory read; default 64 KiB. */
  directoryMaxBytes?: number;
  /** How long a key directory is used; default 1 h (its Cache-Control max-age, within 1 min – 24 h, wins). */
  directoryTtlMs?: number;
  /** Key directories kept; default 256. */
  maxDirectories?: number;
  /** Key directory fetches in flight at once (a client inventing Signature-Agent origins must not make the gate fetch without bound); default 8. */
  maxConcurrentFetches?: number;
  /** Tolerated clock difference for created/expires; default 60 s, at most 3600. */
  clockSkewSeconds?: number;
  /** The longest signature accepted (expires − created); default 3600 s, at most 86 400. */
  maxLifetimeSeconds?: number;
  /** Signatures remembered against replay; default 100 000, one Signature-Agent origin holding at most an eighth. */
  maxNonces?: number;
  /**
   * Signature-Agent origins (https://…) kept apart from all others, besides the catalogue's signers
   * (https://chatgpt.com): their key directories are never dropped from the cache for another
   * origin nor kept waiting for a fetch slot, and they share half of the replay memory among
   * themselves. Anyone can invent origins at will; a crowd of them cannot leave these unverified.
   */
  knownSigners?: readonly string[];
  /**
   * Shared by the site's servers (redisReplayStore), so a signed request replayed to another server
   * is refused too; without it, replay protection is per process. A store that fails or is late
   * leaves the request unverified.
   */
  replayStore?: ReplayStore;
  /** How long a verified signature waits for the replay store; default 500 ms. */
  replayStoreTimeoutMs?: number;
  /**
   * The fetch for key directories; default the runtime's on Cloudflare Workers and Deno Deploy, and
   * none elsewhere (runtimeKeyDirectoryFetch): on Node, nodeKeyDirectoryFetch().
   */
  fetch?: typeof fetch;
  /** Tests only: accept http://127.0.0.1 (and localhost) Signature-Agents and fetch their directories. */
  allowLoopbackDirectories?: boolean;
  now?: () => number;
}

export interface WebBotAuth {
  check(request: SignedRequest, headers: HeaderRecord): Promise<SignatureCheck>;
}

/** The Signature-Agent origins the bot catalogue knows (ChatGPT agent's). */
const CATALOGUE_SIGNERS = BOT_CATALOGUE_ENTRIES.flatMap((entry) =>
  entry.signatureAgent ? [entry.signatureAgent] : [],
);

/** The most clock difference an option may tolerate: beyond an hour, a clock is wrong, not late. */
const MAX_CLOCK_SKEW_SECONDS = 3600;
/** The longest a signed request may wait for a key directory or the replay store. */
const MAX_WAIT_MS = 60_000;
const MAX_DIRECTORY_BYTES = 16 * 1024 * 1024;
const MAX_DIRECTORY_TTL_MS = 86_400_000;

/**
 * A whole number within [min, max], or a RangeError naming the option: a value that is not a number
 * (Number(undefined) from an unset variable) would turn every time check into "not expired".
 */
function wholeNumberOption(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`webBotAuth.${name}: a whole number from ${min} to ${max}, got ${String(value)}`);
  return value;
}

/** host[:port]: a name, an IPv4 address or a bracketed IPv6 one; no scheme, path or credentials. */
const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)(?::\d{1,5})?$/i;

/**
 * `siteDomain`: the site's domain as its terms (GET /v1/site) give it, undefined until they load;
 * while it is undefined nothing verifies. Without it (standalone use) the own hosts are `hosts`.
 */
export function createWebBotAuth(
  options: WebBotAuthOptions = {},
  siteDomain?: () => string | undefined,
  warn?: (message: string) => void,
): WebBotAuth {
  const aliases = (options.hosts ?? []).map((host) => {
    if (typeof host !== 'string' || !HOST.test(host))
      throw new TypeError(
        `webBotAuth.hosts: host names such as "www.example.com" (a port allowed), got ${JSON.stringify(host)}`,
      );
    return siteAuthority(host);
  });
  const standaloneHosts: ReadonlySet<string> | null = aliases.length > 0 ? new Set(aliases) : null;
  let domainHosts: { domain: string; hosts: ReadonlySet<string> } | undefined;
  function ownHosts(): ReadonlySet<string> | null {
    if (!siteDomain) return standaloneHosts;
    const domain = siteDomain();
    if (domain === undefined) return null;
    // The domain can change with a refresh of the terms: the set follows it.
    if (domainHosts?.domain !== domain) domainHosts = { domain, hosts: new Set([siteAuthority(domain), ...aliases]) };
    return domainHosts.hosts;
  }

  const maxLifetimeSeconds = wholeNumberOption(
    'maxLifetimeSeconds',
    options.maxLifetimeSeconds ?? 3600,
    1,
    MAX_WEB_BOT_AUTH_LIFETIME_SECONDS,
  );
  const clockSkewSeconds = wholeNumberOption(
    'clockSkewSeconds',
    options.clockSkewSeconds ?? 60,
    0,
    MAX_CLOCK_SKEW_SECONDS,
  );
  const maxNonces = wholeNumberOption('maxNonces', options.maxNonces ?? 100_000, 1, Number.MAX_SAFE_INTEGER);
  const now = options.now ?? Date.now;
  const allowLoopback = options.allowLoopbackDirectories === true;
  const knownSigners = new Set([
    ...CATALOGUE_SIGNERS,
    ...(options.knownSigners ?? []).map((signer) => {
      const origin = signatureAgentOrigin(signer, allowLoopback);
      if (origin === null)
        throw new TypeError(
          `webBotAuth.knownSigners: https origins such as "https://agent.example", got ${JSON.stringify(signer)}`,
        );
      return origin;
    }),
  ]);
  // Unset stays unset (the directory's defaults); set, it must bound something.
  const optional = (name: keyof WebBotAuthOptions, min: number, max: number) =>
    options[name] === undefined ? undefined : wholeNumberOption(name, options[name], min, max);
  const directory = createKeyDirectory({
    pinnedOrigins: knownSigners,
    fetch: options.fetch,
    warn,
    timeoutMs: optional('directoryTimeoutMs', 1, MAX_WAIT_MS),
    maxBytes: optional('directoryMaxBytes', 1, MAX_DIRECTORY_BYTES),
    ttlMs: optional('directoryTtlMs', 1, MAX_DIRECTORY_TTL_MS),
    maxOrigins: optional('maxDirectories', 1, Number.MAX_SAFE_INTEGER),
    maxConcurrentFetches: optional('maxConcurrentFetches', 1, Number.MAX_SAFE_INTEGER),
    allowLoopback,
    now,
  });
  if (options.replayStore !== undefined && typeof options.replayStore?.claimOnce !== 'function')
    throw new TypeError(
      'webBotAuth.replayStore: an object with claimOnce(key, expiresAtMs), e.g. redisReplayStore(redis)',
    );
  const check = createSignatureVerifier({
    directory,
    nonces: createNonceMemory(maxNonces, now, undefined, knownSigners),
    replayStore: options.replayStore,
    replayStoreTimeoutMs: wholeNumberOption(
      'replayStoreTimeoutMs',
      options.replayStoreTimeoutMs ?? 500,
      1,
      MAX_WAIT_MS,
    ),
    clockSkewSeconds,
    maxLifetimeSeconds,
    allowLoopback,
    ownHosts,
    now,
  });
  return { check };
}
