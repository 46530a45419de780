/*
 * A crawler operator's published IP ranges, as Google, Bing, Apple, OpenAI and Perplexity publish
 * them: `{ "creationTime": "…", "prefixes": [{ "ipv4Prefix": "66.249.64.0/27" }, { "ipv6Prefix":
 * "2001:4860:4801:10::/64" }] }`. Read into merged, sorted ranges, so that asking about an address
 * is a binary search. Entries that are not a prefix, or are broader than any crawler's network
 * (/8 for IPv4, /16 for IPv6), or IPv6 entries reaching into the IPv4-mapped block (IPv4 itself,
 * here), are left out: a list that would vouch for half the Internet vouches for nobody. A document with no usable prefix is refused, so the ranges it would replace are kept.
 */

import { parseIp, parsePrefix, type AddressRange } from './ip-prefix';

/** More prefixes than any operator publishes (Google's lists hold a few hundred). */
export const MAX_PREFIXES = 20_000;
/** The most addresses one entry may cover: a /8 of IPv4, a /16 of IPv6. */
const WIDEST_V4 = 1n << 24n;
const WIDEST_V6 = 1n << 112n;
const IPV4_MAPPED = parsePrefix('::ffff:0:0/96')!;

export interface AddressSet {
  /** True when `address` (an IP literal, IPv4-mapped IPv6 included) is in the ranges. */
  has(address: string): boolean;
  readonly size: number;
}

/** The document's ranges, or why it was refused. */
export function parseRangeList(text: string): { ok: true; addresses: AddressSet } | { ok: false; reason: string } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const prefixes = (document as { prefixes?: unknown } | null)?.prefixes;
  if (!Array.isArray(prefixes)) return { ok: false, reason: 'no "prefixes" list' };
  if (prefixes.length > MAX_PREFIXES) return { ok: false, reason: `more than ${MAX_PREFIXES} prefixes` };
  const ranges: AddressRange[] = [];
  for (const entry of prefixes) {
    const range = rangeOf(entry);
    if (range) ranges.push(range);
  }
  if (ranges.length === 0) return { ok: false, reason: 'no usable prefix' };
  return { ok: true, addresses: addressSet(ranges) };
}

function rangeOf(entry: unknown): AddressRange | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const { ipv4Prefix, ipv6Prefix } = entry as { ipv4Prefix?: unknown; ipv6Prefix?: unknown };
  const v4 = typeof ipv4Prefix === 'string' && !ipv4Prefix.includes(':');
  const text = v4 ? ipv4Prefix : typeof ipv6Prefix === 'string' && ipv6Prefix.includes(':') ? ipv6Prefix : null;
  const range = text === null ? null : parsePrefix(text);
  if (!range || range.end - range.start + 1n > (v4 ? WIDEST_V4 : WIDEST_V6)) return null;
  // IPv4 lives in the IPv4-mapped block (ip-prefix.ts): an IPv6 entry reaching into it would vouch for IPv4 addresses.
  if (!v4 && range.start <= IPV4_MAPPED.end && range.end >= IPV4_MAPPED.start) return null;
  return range;
}

function addressSet(ranges: AddressRange[]): AddressSet {
  const merged = mergeRanges(ranges);
  const starts = merged.map((range) => range.start);
  return {
    size: merged.length,
    has(address) {
      const value = parseIp(address);
      if (value === null) return false;
      // The last range starting at or before the address.
      let low = 0;
      let high = starts.length - 1;
      while (low <= high) {
        const middle = (low + high) >> 1;
        if (starts[middle] <= value) low = middle + 1;
        else high = middle - 1;
      }
      return high >= 0 && value <= merged[high].end;
    },
  };
}

function mergeRanges(ranges: AddressRange[]): AddressRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const merged: AddressRange[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last && range.start <= last.end + 1n) {
      if (range.end > last.end) merged[merged.length - 1] = { start: last.start, end: range.end };
    } else merged.push(range);
  }
  return merged;
}
