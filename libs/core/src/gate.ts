/*
 * Gates are signed offers, not database rows. A gate id carries everything the API needs to take
 * a payment for it, MAC'ed with the site's access-token secret, so whoever holds the secret mints
 * gates (the middleware, locally, for every 402; POST /v1/gates for other middleware) and nobody
 * else can:
 *
 *   "g1." base64url(JSON payload) "." base64url(HMAC-SHA256(secret, GATE_MAC_DOMAIN + payload segment))
 *   payload: [1, site_id, ref, path, price micros, chain_id, asset, pay_to, iat, exp]
 *
 * The MAC input starts with a domain tag that no base64url segment can spell, so a gate's MAC never
 * verifies as an access token's and the other way round. `ref` is a random UUID naming the gate in
 * payments, access tokens and histories (the id itself is long: it carries the path); for a target
 * a router may read as another path, half random and half a MAC binding that target
 * (newTargetBoundGateRef). Whoever knows a gate's id is the visitor it was offered to: histories
 * and other public views show only `ref`.
 */

import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { base64urlDecode, base64urlDecodeUtf8, base64urlEncode, base64urlEncodeUtf8 } from './base64url';
import { constantTimeEqual } from './constant-time';
import { hmacSha256 } from './hmac';
import { isEvmAddress } from './keys';
import { MAX_UNIX_SECONDS } from './limits';
import { MAX_PRICE_MICROS } from './price';

/** Everything a gate offers: pay `micros` of `asset` on `chainId` to `payTo`, for `path` of `siteId`, until `exp`. */
export interface GateTerms {
  siteId: string;
  /** A UUID, random or bound to a target (newTargetBoundGateRef): the gate's name in payments, tokens and histories. */
  ref: string;
  /** The path the payment unlocks, as core's requestPath() spells it. */
  path: string;
  micros: bigint;
  chainId: number;
  asset: `0x${string}`;
  payTo: `0x${string}`;
  /** Unix seconds. */
  iat: number;
  exp: number;
}

export type GateInvalidReason = 'malformed' | 'bad_signature' | 'expired' | 'wrong_site';

export type GateCheck = { valid: true; gate: GateTerms } | { valid: false; reason: GateInvalidReason };

export interface VerifyGateOptions {
  /** The site's usable access-token secrets; a gate signed with any of them passes. */
  secret: string | readonly string[];
  /** When given, the gate must be this site's. */
  siteId?: string;
  /** Unix seconds; default now. */
  now?: number;
}

const VERSION = 1;
const PREFIX = 'g1.';
const GATE_MAC_DOMAIN = 'crawlgate gate v1\n';
const MAC_BYTES = 32;
/** A 2,048-character URL whose path is all escaped control characters still fits. */
export const MAX_GATE_ID_LENGTH = 8192;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A fresh random gate ref (UUID v4). */
export function newGateRef(): string {
  return globalThis.crypto.randomUUID();
}

const TARGET_TAG_DOMAIN = 'crawlgate gate target v1\n';

/**
 * A gate ref bound to the request target it is offered on (`target`: the caller's one spelling of
 * it): 8 random bytes, then 8 of an HMAC under the secret that signs the gate over them and the
 * target, in UUID v4 form, so whatever reads refs reads it. For a target a router may read as
 * another path: a payment of its gate is then taken again on that very target (a retry, a resend),
 * never on the other spellings of its path, which a router may serve as other pages.
 */
export function newTargetBoundGateRef(secret: string, target: string): string {
  const random = new Uint8Array(8);
  globalThis.crypto.getRandomValues(random);
  random[6] = (random[6] & 0x0f) | 0x40; // UUID v4's version, in the part the tag covers
  return boundRef(secret, random, target);
}

/** Whether `ref` was made by newTargetBoundGateRef for `target` under one of `secrets`. */
export function gateRefBindsTarget(ref: string, secrets: readonly string[], target: string): boolean {
  if (!UUID.test(ref)) return false;
  const random = hexToBytes(ref.slice(0, 8) + ref.slice(9, 13) + ref.slice(14, 18));
  return secrets.some((secret) => secret.length > 0 && boundRef(secret, random, target) === ref);
}

/** `random`: 8 bytes (version bits set); the tag's first 8 bytes follow, with UUID's variant bits set. */
function boundRef(secret: string, random: Uint8Array, target: string): string {
  const bytes = new Uint8Array(16);
  bytes.set(random);
  bytes.set(hmacSha256(secret, `${TARGET_TAG_DOMAIN}${bytesToHex(random)}\n${target}`).subarray(0, 8), 8);
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytesToHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Throws TypeError for terms that readGate() would call malformed, or an empty secret. */
export function signGate(terms: GateTerms, secret: string): string {
  if (!isGateTerms(terms)) throw new TypeError('Invalid gate terms');
  if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('Gate secret must be a non-empty string');
  const { siteId, ref, path, micros, chainId, asset, payTo, iat, exp } = terms;
  const payload = [
    VERSION,
    siteId,
    ref,
    path,
    micros.toString(),
    chainId,
    asset.toLowerCase(),
    payTo.toLowerCase(),
    iat,
    exp,
  ];
  const segment = base64urlEncodeUtf8(JSON.stringify(payload));
  const id = `${PREFIX}${segment}.${base64urlEncode(hmacSha256(secret, GATE_MAC_DOMAIN + segment))}`;
  if (id.length > MAX_GATE_ID_LENGTH) throw new TypeError(`Gate id would exceed ${MAX_GATE_ID_LENGTH} characters`);
  return id;
}

/** The terms of a well-formed gate id, MAC NOT checked: only to find the site whose secrets check it. */
export function readGate(id: unknown): GateTerms | null {
  return decode(id)?.terms ?? null;
}

/** Checks, in order: malformed, bad_signature, wrong_site, expired (now >= exp). */
export function verifyGate(id: string, options: VerifyGateOptions): GateCheck {
  const decoded = decode(id);
  if (!decoded) return { valid: false, reason: 'malformed' };
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  let signed = false;
  for (const secret of secrets) {
    if (
      typeof secret === 'string' &&
      secret.length > 0 &&
      constantTimeEqual(hmacSha256(secret, GATE_MAC_DOMAIN + decoded.segment), decoded.mac)
    )
      signed = true;
  }
  if (!signed) return { valid: false, reason: 'bad_signature' };
  if (options.siteId !== undefined && decoded.terms.siteId !== options.siteId)
    return { valid: false, reason: 'wrong_site' };
  const now = options.now ?? Date.now() / 1000;
  // !(now < exp): a NaN clock counts as expired.
  if (!(now < decoded.terms.exp)) return { valid: false, reason: 'expired' };
  return { valid: true, gate: decoded.terms };
}

function decode(id: unknown): { segment: string; mac: Uint8Array; terms: GateTerms } | null {
  if (typeof id !== 'string' || id.length > MAX_GATE_ID_LENGTH || !id.startsWith(PREFIX)) return null;
  const parts = id.slice(PREFIX.length).split('.');
  if (parts.length !== 2) return null;
  const [segment, macText] = parts;
  const mac = base64urlDecode(macText);
  const json = base64urlDecodeUtf8(segment);
  if (mac?.length !== MAC_BYTES || json === null) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(payload) || payload.length !== 10 || payload[0] !== VERSION) return null;
  const [, siteId, ref, path, micros, chainId, asset, payTo, iat, exp] = payload;
  if (typeof micros !== 'string' || !/^\d{1,7}$/.test(micros)) return null;
  const terms = { siteId, ref, path, micros: BigInt(micros), chainId, asset, payTo, iat, exp };
  return isGateTerms(terms) ? { segment, mac, terms } : null;
}

function isGateTerms(terms: object): terms is GateTerms {
  const t = terms as Record<string, unknown>;
  return (
    typeof t.siteId === 'string' &&
    UUID.test(t.siteId) &&
    typeof t.ref === 'string' &&
    UUID.test(t.ref) &&
    typeof t.path === 'string' &&
    t.path.startsWith('/') &&
    typeof t.micros === 'bigint' &&
    t.micros > 0n &&
    t.micros <= MAX_PRICE_MICROS &&
    Number.isSafeInteger(t.chainId) &&
    (t.chainId as number) > 0 &&
    isEvmAddress(t.asset) &&
    isEvmAddress(t.payTo) &&
    isUnixSeconds(t.iat) &&
    isUnixSeconds(t.exp)
  );
}

function isUnixSeconds(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_UNIX_SECONDS;
}
