/*
 * Verifying a request's Web Bot Auth signature (RFC 9421 with tag="web-bot-auth"): three outcomes,
 * as the draft's deployment guidance keeps them apart.
 *
 *   verified    the signature, its parameters and its key check out: the request comes from a
 *               holder of a key the Signature-Agent origin publishes;
 *   invalid     it does not (malformed, expired, from the future, too long-lived, a required
 *               component not covered, made for another site's host, a key the directory does
 *               not hold, a wrong signature, a replayed nonce);
 *   unverified  it cannot be told now (the site's own hosts not known yet, no Signature-Agent,
 *               its directory unreachable, slow, too big or not a directory, the replay memory full).
 *
 * A signature names the host it was made for (@authority) and the path (@path): both must be
 * signed, and the host must be one of this site's own. Frameworks serve any Host header, so a
 * signature an agent made fetching another site would otherwise verify here, replayed with that
 * site's Host.
 *
 * Only `verified` identifies anyone; the caller treats the other two alike (never as verified).
 * The cheap checks run first, the directory fetch (awaited only for a request that claims a
 * signature) and the Ed25519 check after, and the nonce is remembered only once the signature
 * verified, so forged requests cannot fill the replay memory.
 */

import {
  componentName,
  normalizedAuthority,
  parseSfDictionary,
  parseSfItem,
  signatureAgentOrigin,
  signatureBase,
  verifyEd25519,
  base64Encode,
  WEB_BOT_AUTH_TAG,
  type SfInnerList,
  type SfItem,
  type SignedRequestView,
} from '@crawlgate/core';
import type { HeaderRecord } from '../request-headers';
import type { KeyDirectory } from './key-directory';
import { replayKey, type NonceMemory } from './nonce-memory';
import { claimWithin, type ReplayStore } from './replay-store';

export type SignatureCheck =
  | { status: 'verified'; agent: string; keyid: string; covered: ReadonlySet<string> }
  | { status: 'invalid' | 'unverified'; reason: string; agent: string | null; covered: ReadonlySet<string> };

export interface SignatureVerifierOptions {
  directory: KeyDirectory;
  nonces: NonceMemory;
  /** Shared by the site's servers, asked after `nonces` (replay-store.ts). */
  replayStore?: ReplayStore;
  replayStoreTimeoutMs: number;
  /** How far `created` may be ahead of our clock, and `expires` behind it. */
  clockSkewSeconds: number;
  /** The longest `expires - created` accepted. */
  maxLifetimeSeconds: number;
  /** Tests: a Signature-Agent of http://127.0.0.1:… */
  allowLoopback: boolean;
  /** This site's own hosts, as siteAuthority() spells them; null while they are not known (nothing verifies then). */
  ownHosts(): ReadonlySet<string> | null;
  now?: () => number;
}

export interface SignedRequest {
  method: string;
  /** Path and query, or an absolute URL. */
  url: string;
}

const MAX_NONCE_LENGTH = 512;
const MAX_KEYID_LENGTH = 128;

/**
 * Whether a request claims a Web Bot Auth signature: a Signature-Agent, or a Signature-Input that
 * names the tag. Only such requests pay for any of this; other RFC 9421 signatures (a webhook's,
 * say) are none of the gate's business.
 */
export function claimsSignature(headers: HeaderRecord): boolean {
  if (headers['signature-agent'] !== undefined) return true;
  const input = fieldValue(headers, 'signature-input');
  return input !== undefined && input.includes(WEB_BOT_AUTH_TAG);
}

/** `headers` must have lower-case names (lowerCaseHeaders). */
export function createSignatureVerifier(
  options: SignatureVerifierOptions,
): (request: SignedRequest, headers: HeaderRecord) => Promise<SignatureCheck> {
  const now = options.now ?? Date.now;

  return async function check(request, headers) {
    const covered = new Set<string>();
    const fail = (status: 'invalid' | 'unverified', reason: string, agent: string | null = null): SignatureCheck => ({
      status,
      reason,
      agent,
      covered,
    });

    const inputField = fieldValue(headers, 'signature-input');
    const signatureField = fieldValue(headers, 'signature');
    if (inputField === undefined || signatureField === undefined)
      return fail('invalid', 'Signature and Signature-Input come together');
    const inputs = parseSfDictionary(inputField);
    const signatures = parseSfDictionary(signatureField);
    if (!inputs || !signatures) return fail('invalid', 'Signature or Signature-Input is not a valid structured field');
    const [label, params] = webBotAuthInput(inputs) ?? [];
    if (label === undefined || params === undefined) return fail('invalid', 'no signature is tagged "web-bot-auth"');
    for (const item of params.items) {
      const name = componentName(item);
      if (name !== null) covered.add(name);
    }

    const agent = claimedAgent(fieldValue(headers, 'signature-agent'), covered, options.allowLoopback);
    if (!covered.has('@authority')) return fail('invalid', '@authority is not signed', agent.origin);
    if (!covered.has('@path')) return fail('invalid', '@path is not signed', agent.origin);
    const view = requestView(request, headers);
    const ownHosts = options.ownHosts();
    if (ownHosts === null) return fail('unverified', "the site's own domain is not known yet", agent.origin);
    if (!ownHosts.has(siteAuthority(view.authority)))
      return fail('invalid', 'the signature was made for another host than this site’s', agent.origin);
    if (agent.problem) return fail(agent.status, agent.problem, agent.origin);

    const created = integerParam(params, 'created');
    const expires = integerParam(params, 'expires');
    const keyid = params.params.get('keyid');
    const nonce = params.params.get('nonce');
    const alg = params.params.get('alg');
    if (created === undefined || expires === undefined)
      return fail('invalid', 'created and expires are required', agent.origin);
    if (keyid?.type !== 'string' || keyid.value.length > MAX_KEYID_LENGTH)
      return fail('invalid', 'keyid is required', agent.origin);
    if (nonce !== undefined && (nonce.type !== 'string' || nonce.value.length > MAX_NONCE_LENGTH))
      return fail('invalid', 'nonce must be a short string', agent.origin);
    if (alg !== undefined && (alg.type !== 'string' || alg.value !== 'ed25519'))
      return fail('invalid', 'only ed25519 is accepted', agent.origin);
    const seconds = Math.floor(now() / 1000);
    if (created > seconds + options.clockSkewSeconds) return fail('invalid', 'created is in the future', agent.origin);
    if (expires <= created) return fail('invalid', 'expires is not after created', agent.origin);
    if (expires - created > options.maxLifetimeSeconds)
      return fail('invalid', `the signature is valid for longer than ${options.maxLifetimeSeconds} s`, agent.origin);
    // Accepted until the very millisecond its nonce is forgotten (expiresAtMs below), never after.
    const expiresAtMs = (expires + options.clockSkewSeconds) * 1000;
    if (now() >= expiresAtMs) return fail('invalid', 'the signature has expired', agent.origin);

    const signature = signatures.get(label);
    if (signature?.kind !== 'item' || signature.value.type !== 'bytes' || signature.value.value.length !== 64)
      return fail('invalid', 'no 64-byte Signature for the web-bot-auth label', agent.origin);
    const base = signatureBase(view, params);
    if (base === null) return fail('invalid', 'a signed component is missing, repeated or not supported', agent.origin);
    if (agent.origin === null) return fail('unverified', 'no Signature-Agent names where the key is');

    const lookup = await options.directory.key(agent.origin, keyid.value);
    if (lookup.kind === 'unavailable')
      return fail('unverified', `key directory of ${agent.origin}: ${lookup.reason}`, agent.origin);
    if (lookup.kind === 'absent')
      return fail('invalid', `keyid is not in the key directory of ${agent.origin}`, agent.origin);
    if (!(await verifyEd25519(lookup.key, base, signature.value.value)))
      return fail('invalid', 'the signature does not verify', agent.origin);

    // Without a nonce, the signature itself is what must not come twice.
    const once = nonce?.type === 'string' ? `nonce:${nonce.value}` : `signature:${base64Encode(signature.value.value)}`;
    const key = `${keyid.value}\n${once}`;
    const remembered = options.nonces.remember(agent.origin, key, expiresAtMs);
    if (remembered === 'replayed') return fail('invalid', 'the nonce was used before', agent.origin);
    if (remembered === 'full')
      return fail('unverified', 'too many signatures are still valid to remember another', agent.origin);
    if (options.replayStore) {
      // Another server of the site may have accepted it: the shared store decides, and no answer verifies nothing.
      const shared = replayKey(agent.origin, key);
      // Kept a skew longer: the site's other servers, their clocks up to a skew behind this one's, accept it that much longer.
      const sharedUntilMs = expiresAtMs + options.clockSkewSeconds * 1000;
      const first = await claimWithin(options.replayStore, shared, sharedUntilMs, options.replayStoreTimeoutMs);
      if (first === false) return fail('invalid', 'the nonce was used before (shared replay store)', agent.origin);
      if (first === undefined)
        return fail('unverified', 'the shared replay store failed or did not answer in time', agent.origin);
    }
    return { status: 'verified', agent: agent.origin, keyid: keyid.value, covered };
  };
}

/** The first Signature-Input member tagged web-bot-auth. */
function webBotAuthInput(inputs: Map<string, SfItem | SfInnerList>): [string, SfInnerList] | undefined {
  for (const [label, member] of inputs) {
    const tag = member.params.get('tag');
    if (member.kind === 'inner-list' && tag?.type === 'string' && tag.value === WEB_BOT_AUTH_TAG)
      return [label, member];
  }
  return undefined;
}

type AgentClaim =
  | { origin: string | null; problem?: undefined }
  | { origin: string | null; problem: string; status: 'invalid' | 'unverified' };

/**
 * The origin Signature-Agent names for this signature: the legacy String form, or the Dictionary
 * member the signature covers (`"signature-agent";key="…"`, or the whole field when it has one
 * member). The header must be signed: an unsigned one could name anyone's directory.
 */
function claimedAgent(field: string | undefined, covered: ReadonlySet<string>, allowLoopback: boolean): AgentClaim {
  if (field === undefined) return { origin: null };
  let member: SfItem | SfInnerList | undefined;
  if (field.trimStart().startsWith('"')) {
    member = parseSfItem(field) ?? undefined;
    if (!member) return { origin: null, problem: 'Signature-Agent is not a valid structured field', status: 'invalid' };
    if (!covered.has('signature-agent'))
      return { origin: null, problem: 'Signature-Agent is not signed', status: 'invalid' };
  } else {
    const members = parseSfDictionary(field);
    if (!members)
      return { origin: null, problem: 'Signature-Agent is not a valid structured field', status: 'invalid' };
    const key = [...covered]
      .find((name) => name.startsWith('signature-agent;key='))
      ?.slice('signature-agent;key='.length);
    if (key !== undefined) member = members.get(key);
    else if (covered.has('signature-agent') && members.size === 1) member = members.values().next().value;
    if (!member) return { origin: null, problem: 'Signature-Agent is not signed', status: 'invalid' };
  }
  if (member.kind !== 'item' || member.value.type !== 'string')
    return { origin: null, problem: 'Signature-Agent is not a string', status: 'invalid' };
  const origin = signatureAgentOrigin(member.value.value, allowLoopback);
  if (!origin) return { origin: null, problem: 'Signature-Agent is not an https origin', status: 'invalid' };
  const type = member.params.get('type');
  if (type !== undefined && (type.type !== 'token' || type.value !== 'directory'))
    return { origin, problem: 'only Signature-Agent type=directory is supported', status: 'unverified' };
  return { origin };
}

function integerParam(params: SfInnerList, name: string): number | undefined {
  const value = params.params.get(name);
  return value?.type === 'integer' ? value.value : undefined;
}

/** A header's lines combined with ", " (RFC 9421 2.1); undefined when absent. */
function fieldValue(headers: HeaderRecord, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** An authority as RFC 9421 compares it (normalizedAuthority), also without the root's trailing dot: the form own hosts are kept in. */
export function siteAuthority(authority: string): string {
  return normalizedAuthority(authority).replace(/\.(?=(?::\d*)?$)/, '');
}

/** The request as RFC 9421 sees it: authority from an absolute URL, else the Host header. */
export function requestView(request: SignedRequest, headers: HeaderRecord): SignedRequestView {
  let authority: string;
  let target: string;
  if (request.url.startsWith('/') || request.url === '*') {
    authority = fieldValue(headers, 'host') ?? fieldValue(headers, ':authority') ?? '';
    target = request.url;
  } else {
    try {
      const url = new URL(request.url);
      authority = url.host;
      target = url.pathname + url.search;
    } catch {
      authority = '';
      target = request.url;
    }
  }
  const mark = target.indexOf('?');
  const path = (mark < 0 ? target : target.slice(0, mark)).replace(/#.*$/, '');
  const query = mark < 0 ? '' : target.slice(mark).replace(/#.*$/, '');
  return { method: request.method, authority, path, query, header: (name) => fieldValue(headers, name) };
}
