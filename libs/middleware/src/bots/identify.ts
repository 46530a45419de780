/*
 * Who is asking, with Web Bot Auth: the User-Agent says who a visitor claims to be, a verified
 * signature says who it is.
 *
 * - A verified signature names the operator whose key directory signed it, whatever the
 *   User-Agent says: its catalogue entry (the one the User-Agent names if that entry signs with
 *   this origin, else the origin's signed-only entry, ChatGPT agent for chatgpt.com), or an
 *   unknown agent run by that origin.
 * - A request that claims a signing crawler (by its User-Agent or its Signature-Agent) or a
 *   crawler the policy requires to sign (requireSignature), without a verified signature, is
 *   unverified: the policy's action applies, except that "allow" becomes "charge". Block stays.
 * - A signature that fails from an unknown origin still says "automated": never a person.
 * - An unsigned request naming a crawler whose operator publishes its IP ranges (or documents its
 *   host names) is verified by its address (crawler-ips/): inside them (or named under them, and
 *   confirmed), as a valid signature would (unless the policy requires a signature); outside, or
 *   while they cannot be read, unverified ("allow" becomes "charge"). While they are being
 *   fetched (or looked up), a request they would let through is marked `awaitingAddress`: the
 *   gate waits for them and asks again.
 * - Without signature headers this is the User-Agent classification, unchanged: people pass.
 */

import {
  BOT_CATALOGUE_ENTRIES,
  MAX_CRAWLER_NAME_LENGTH,
  UNKNOWN_AUTOMATION,
  type BotAction,
  type BotCatalogueEntry,
  type BotCategory,
} from '@crawlgate/core';
import type { AddressCheck } from '../crawler-ips';
import type { SignatureCheck } from '../web-bot-auth';
import { classifyVisitor } from './classify';
import { requiresSignature, resolveBotAction } from './policy';
import type { BotPolicy } from './types';

export type Identified =
  | { kind: 'human' }
  | {
      kind: 'bot';
      name: string;
      category: BotCategory;
      action: BotAction;
      operator: string | null;
      verified: boolean;
      /** Its operator's IP ranges are loading and would decide whether it is allowed. */
      awaitingAddress?: true;
    };

/**
 * The request's address against what `crawler`'s operator publishes (its ranges, or its host names
 * for reverse DNS); undefined when it publishes neither. `lookUp`: whether the answer could let the
 * request through; a check that costs a query per address makes one only then.
 */
export interface AddressChecker {
  check(crawler: string, address: string | undefined, lookUp: boolean): AddressCheck | undefined;
}

const SIGNERS = BOT_CATALOGUE_ENTRIES.filter((entry) => entry.signatureAgent !== undefined);
const BY_NAME = new Map(BOT_CATALOGUE_ENTRIES.map((entry) => [entry.name, entry]));

/** `signature`: the verifier's answer when the request claims a signature, else undefined; `address`: the client's IP. */
export function identifyVisitor(
  userAgent: string | undefined,
  policy: BotPolicy | undefined,
  signature?: SignatureCheck,
  addresses?: AddressChecker,
  address?: string,
): Identified {
  const claimed = classifyVisitor(userAgent, policy);
  const claimedEntry = claimed.kind === 'bot' ? BY_NAME.get(claimed.name) : undefined;

  if (signature?.status === 'verified') {
    const entry = signedEntry(signature.agent, claimedEntry);
    if (entry)
      return bot(
        entry.name,
        entry.category,
        entry.operator,
        resolveBotAction(entry.name, entry.category, policy),
        true,
      );
    return bot(
      UNKNOWN_AUTOMATION,
      'automation',
      hostOf(signature.agent),
      resolveBotAction(UNKNOWN_AUTOMATION, 'automation', policy),
      true,
    );
  }

  if (signature) {
    // Signed, not verified: whom the Signature-Agent names (if we know it), else whom the User-Agent names.
    const entry = signature.agent === null ? undefined : signedEntry(signature.agent, claimedEntry);
    if (entry) return unverified(entry.name, entry.category, entry.operator, policy, true);
    if (claimed.kind === 'human') return unverified(UNKNOWN_AUTOMATION, 'automation', null, policy, false);
  }

  if (claimed.kind === 'human') return claimed;
  const { name, category } = claimed;
  const operator = claimedEntry?.operator ?? null;
  const signs = claimedEntry?.signatureAgent !== undefined;
  const action = resolveBotAction(name, category, policy);
  const mustSign = requiresSignature(name, category, policy);
  // A crawler that signs is verified by its signature only (issue 15): its address is not asked.
  // A lookup per address (reverse DNS) is made only where its answer could let the request through.
  const addressCheck = signs
    ? undefined
    : addresses?.check(name, address, action === 'allow' && !signature && !mustSign);
  // Only an unsigned claim is verified by its address: a signature that failed is not rescued by one.
  if (addressCheck === 'in' && !signature && !mustSign) return bot(name, category, operator, action, true);
  const mustVerify = signs || mustSign || addressCheck !== undefined;
  const visitor = bot(name, category, operator, mustVerify && action === 'allow' ? 'charge' : action, false);
  // Worth the wait only when the ranges could let it through.
  if (addressCheck === 'loading' && !signature && !mustSign && action === 'allow' && visitor.kind === 'bot')
    visitor.awaitingAddress = true;
  return visitor;
}

/** The entry a verified (or claimed) signature of `origin` stands for. */
function signedEntry(origin: string, claimed: BotCatalogueEntry | undefined): BotCatalogueEntry | undefined {
  if (claimed?.signatureAgent === origin) return claimed;
  return (
    SIGNERS.find((entry) => entry.signatureAgent === origin && entry.signedOnly) ??
    SIGNERS.find((entry) => entry.signatureAgent === origin)
  );
}

/** Not verified: the policy's action, except that a crawler that signs or publishes its ranges, or must sign, is never allowed. */
function unverified(
  name: string,
  category: BotCategory,
  operator: string | null,
  policy: BotPolicy | undefined,
  verifiable: boolean,
): Identified {
  const action = resolveBotAction(name, category, policy);
  const mustVerify = verifiable || requiresSignature(name, category, policy);
  return bot(name, category, operator, mustVerify && action === 'allow' ? 'charge' : action, false);
}

/** The signer's host as the crawler counts' operator; null where the API would refuse it (an IPv6 literal, a long name), which would lose the whole report. */
function hostOf(origin: string): string | null {
  const host = new URL(origin).host;
  return host.length <= MAX_CRAWLER_NAME_LENGTH && /^[a-z0-9][a-z0-9.:-]*$/.test(host) ? host : null;
}

function bot(
  name: string,
  category: BotCategory,
  operator: string | null,
  action: BotAction,
  verified: boolean,
): Identified {
  return { kind: 'bot', name, category, action, operator, verified };
}
