/*
 * Web Bot Auth key directories: the Ed25519 keys an agent publishes at
 * <Signature-Agent origin>/.well-known/http-message-signatures-directory, fetched when a signed
 * request names an origin not cached yet, and kept in a bounded LRU with a TTL.
 *
 * A directory is untrusted input fetched because a client asked: https only (http on loopback
 * only when a test allows it), no redirects, 200 only, a wall-clock timeout, a byte cap, a key
 * cap, and no IP literal of a private, loopback or link-local range. A failed fetch is cached for
 * a short while (no refetch storm) and never evicts keys that loaded before (the draft: an
 * operator's outage must not revoke its keys everywhere), up to a bounded staleness. A directory
 * that loads without a key is evidence, and that key stops verifying.
 */

import {
  cappedText,
  importEd25519PublicKey,
  isLoopbackAddress,
  jwkThumbprint,
  KEY_DIRECTORY_MEDIA_TYPE,
  KEY_DIRECTORY_PATH,
  readEd25519PublicJwk,
  refusedAddress,
  withinDeadline,
  type WebCryptoKey,
} from '@crawlgate/core';
import { runtimeKeyDirectoryFetch } from './runtime-fetch';

export interface KeyDirectoryOptions {
  /**
   * Default: the runtime's where it cannot reach the site's own network, else none
   * (runtimeKeyDirectoryFetch); the global one with allowLoopback (tests).
   */
  fetch?: typeof fetch;
  /** Told once when this runtime fetches no directory by default; default console.warn. */
  warn?: (message: string) => void;
  /** Per fetch, body included; default 1000 ms. */
  timeoutMs?: number;
  /** Default 64 KiB. */
  maxBytes?: number;
  /** Keys a directory may list; default 32. */
  maxKeys?: number;
  /** How long a directory is used before it is fetched again; default 1 h (Cache-Control max-age within 1 min – 24 h wins). */
  ttlMs?: number;
  /** How long a failed fetch is remembered; default 60 s. */
  failureTtlMs?: number;
  /** How long keys that loaded before keep verifying while refreshes fail; default 24 h. */
  maxStaleMs?: number;
  /** Origins kept (least recently used dropped first); default 256. */
  maxOrigins?: number;
  /** A key not in a fresh directory triggers a refetch (a rotation) at most this often per origin; default 60 s. */
  minRefetchMs?: number;
  /** Directory fetches in flight at once; a lookup that would start one more is unavailable. Default 8. */
  maxConcurrentFetches?: number;
  /**
   * Origins kept apart from all others: never dropped from the cache for another origin, and
   * fetched without waiting for one of the `maxConcurrentFetches` slots that invented origins can hold.
   */
  pinnedOrigins?: ReadonlySet<string>;
  /** Tests only: allow http:// and loopback directories. */
  allowLoopback?: boolean;
  now?: () => number;
}

export type KeyLookup =
  | { kind: 'found'; key: WebCryptoKey }
  /** The directory loaded and does not hold this key (or holds it outside its nbf/exp). */
  | { kind: 'absent' }
  /** No directory: fetch failed, timed out, too big, not a directory, refused origin. */
  | { kind: 'unavailable'; reason: string };

export interface KeyDirectory {
  key(origin: string, keyid: string): Promise<KeyLookup>;
}

interface Key {
  key: WebCryptoKey;
  nbf?: number;
  exp?: number;
}

interface Entry {
  /** Undefined until a fetch succeeds. */
  keys?: Map<string, Key>;
  loadedAt: number;
  freshUntil: number;
  /** After a failure: no new fetch before this. */
  retryAt: number;
  failure?: string;
  inflight?: Promise<void>;
}

const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 86_400_000;

export function createKeyDirectory(options: KeyDirectoryOptions = {}): KeyDirectory {
  const http =
    options.fetch ??
    (options.allowLoopback
      ? (input, init) => globalThis.fetch(input, init)
      : runtimeKeyDirectoryFetch(options.warn ?? ((message) => console.warn(`crawlgate: ${message}`))));
  const timeoutMs = options.timeoutMs ?? 1000;
  const maxBytes = options.maxBytes ?? 65_536;
  const maxKeys = options.maxKeys ?? 32;
  const ttlMs = options.ttlMs ?? 3_600_000;
  const failureTtlMs = options.failureTtlMs ?? 60_000;
  const maxStaleMs = options.maxStaleMs ?? 86_400_000;
  const maxOrigins = options.maxOrigins ?? 256;
  const minRefetchMs = options.minRefetchMs ?? 60_000;
  const maxConcurrentFetches = options.maxConcurrentFetches ?? 8;
  const now = options.now ?? Date.now;
  const pinnedOrigins = options.pinnedOrigins ?? new Set<string>();
  const entries = new Map<string, Entry>();
  // Pinned origins' entries: at most one each, never evicted, each fetch at most one in flight.
  const pinned = new Map<string, Entry>();
  // Each new Signature-Agent origin costs an outbound fetch: a client inventing origins must not make the gate fetch without bound.
  let fetching = 0;

  function entryOf(origin: string): Entry {
    if (pinnedOrigins.has(origin)) {
      let entry = pinned.get(origin);
      if (!entry) pinned.set(origin, (entry = { loadedAt: 0, freshUntil: 0, retryAt: 0 }));
      return entry;
    }
    let entry = entries.get(origin);
    if (entry)
      entries.delete(origin); // re-inserted last: most recently used
    else entry = { loadedAt: 0, freshUntil: 0, retryAt: 0 };
    entries.set(origin, entry);
    while (entries.size > maxOrigins) entries.delete(entries.keys().next().value as string);
    return entry;
  }

  function refresh(origin: string, entry: Entry): Promise<void> {
    if (entry.inflight) return entry.inflight;
    const counted = !pinnedOrigins.has(origin);
    if (counted && fetching >= maxConcurrentFetches) return Promise.resolve();
    if (counted) fetching++;
    const loading = load(origin);
    // The slot is held until the fetch itself ends, past the deadline if it must: a fetch that
    // ignores its signal must not let ever more origins start fetches.
    const release = () => void fetching--;
    if (counted) loading.then(release, release);
    // The gate's own deadline beside the fetch's signal, which a fetch of the publisher's may ignore.
    entry.inflight = withinDeadline(loading, timeoutMs)
      .then(
        ({ keys, ttl }) => {
          const at = now();
          Object.assign(entry, {
            keys,
            loadedAt: at,
            freshUntil: at + ttl,
            retryAt: at + minRefetchMs,
            failure: undefined,
          });
        },
        (error: Error) => {
          const at = now();
          Object.assign(entry, { retryAt: at + failureTtlMs, failure: error.message });
          // Keys that loaded before stay, within the staleness bound.
          if (entry.keys && at - entry.freshUntil > maxStaleMs) entry.keys = undefined;
        },
      )
      .finally(() => {
        entry.inflight = undefined;
      });
    return entry.inflight;
  }

  async function load(origin: string): Promise<{ keys: Map<string, Key>; ttl: number }> {
    const refused = refusedOrigin(origin, options.allowLoopback === true, { anyPort: pinnedOrigins.has(origin) });
    if (refused) throw new Error(refused);
    const response = await http(`${origin}${KEY_DIRECTORY_PATH}`, {
      redirect: 'manual',
      headers: { accept: `${KEY_DIRECTORY_MEDIA_TYPE}, application/json;q=0.9` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`the key directory answered ${response.status}`);
    }
    const type = (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (type !== KEY_DIRECTORY_MEDIA_TYPE && type !== 'application/json') {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`the key directory is ${type || 'untyped'}, not JSON`);
    }
    const text = await cappedText(response, maxBytes, 'the key directory');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error('the key directory is not JSON');
    }
    return { keys: await readKeys(body, maxKeys), ttl: ttlOf(response.headers.get('cache-control'), ttlMs) };
  }

  return {
    async key(origin, keyid) {
      const entry = entryOf(origin);
      const at = now();
      const due =
        at >= entry.freshUntil ||
        (entry.keys !== undefined && !entry.keys.has(keyid) && at - entry.loadedAt >= minRefetchMs);
      if (due && (at >= entry.retryAt || entry.inflight)) await refresh(origin, entry);
      // Whether or not a refresh could run (every fetch slot may be held): no key past the staleness bound.
      if (entry.keys && now() - entry.freshUntil > maxStaleMs) entry.keys = undefined;
      if (!entry.keys)
        return {
          kind: 'unavailable',
          reason: entry.failure ?? 'the key directory is not loaded (too many fetches in flight)',
        };
      const found = entry.keys.get(keyid);
      const seconds = now() / 1000;
      if (
        !found ||
        (found.nbf !== undefined && seconds < found.nbf) ||
        (found.exp !== undefined && seconds >= found.exp)
      )
        return { kind: 'absent' };
      return { kind: 'found', key: found.key };
    },
  };
}

/** The Ed25519 keys of a JWKS by thumbprint. A listed kid must be the thumbprint (the draft); other keys are skipped. */
async function readKeys(body: unknown, maxKeys: number): Promise<Map<string, Key>> {
  const list = (body as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) throw new Error('the key directory has no "keys" list');
  if (list.length > maxKeys) throw new Error(`the key directory lists more than ${maxKeys} keys`);
  const keys = new Map<string, Key>();
  for (const item of list) {
    const jwk = readEd25519PublicJwk(item);
    if (!jwk) continue;
    const thumbprint = jwkThumbprint(jwk);
    const { kid, nbf, exp } = item as { kid?: unknown; nbf?: unknown; exp?: unknown };
    if (kid !== undefined && kid !== thumbprint) continue;
    keys.set(thumbprint, {
      key: await importEd25519PublicKey(jwk),
      nbf: typeof nbf === 'number' ? nbf : undefined,
      exp: typeof exp === 'number' ? exp : undefined,
    });
  }
  return keys;
}

function ttlOf(cacheControl: string | null, fallback: number): number {
  const maxAge = /(?:^|[,\s])max-age=(\d{1,9})(?:$|[,\s])/i.exec(cacheControl ?? '')?.[1];
  if (maxAge === undefined) return fallback;
  return Math.min(Math.max(Number(maxAge) * 1000, MIN_TTL_MS), MAX_TTL_MS);
}

/**
 * Why a directory origin is not fetched; null when it may be (addresses as core's refusedAddress
 * judges them). Its port must be 443 unless `anyPort` (an origin pinned in the catalogue or
 * knownSigners) or it is a loopback one a test allows: any request may name any origin in its
 * Signature-Agent, and a gate connecting to any host and port for it would probe others' servers
 * from the site's address, its answer's delay telling which ports are open. Host names are not resolved here (edge runtimes cannot): on Node,
 * nodeKeyDirectoryFetch checks the addresses a name resolves to.
 */
export function refusedOrigin(
  origin: string,
  allowLoopback: boolean,
  { anyPort }: { anyPort: boolean } = { anyPort: false },
): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'not a URL';
  }
  // Without the root's trailing dot(s): "localhost." is localhost.
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
  const loopback = host === 'localhost' || isLoopbackAddress(host);
  if (loopback) return allowLoopback ? null : 'a loopback address';
  if (url.protocol !== 'https:') return 'not https';
  if (host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) return 'a local name';
  if (!anyPort && url.port !== '' && url.port !== '443') return 'a port other than 443';
  return refusedAddress(host, allowLoopback);
}
