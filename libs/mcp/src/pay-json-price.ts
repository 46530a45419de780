/*
 * A path's price from a site's /.well-known/pay.json (version 1, as @crawlgate/middleware serves
 * it): the first matching rule, else the default; nothing on the free paths. This is the
 * published table, read without asking the page (so no gate is offered and nothing is counted);
 * the page's own 402 stays the word that counts, since the site's bot policy is not in the table.
 */

import { chainIdOf } from '@crawlgate/agent';
import {
  compilePriceTable,
  formatMicrosUsd,
  isEvmAddress,
  MAX_RULES_PER_SITE,
  MAX_URL_LENGTH,
  parsePriceUsd,
  requestPath,
  untrusted,
  type PayJson,
} from '@crawlgate/core';
import type { QuotedOffer } from './quoted-offers';

export type PayJsonPrice = { free: true } | { free: false; offer: QuotedOffer };

/**
 * The most free_paths read: the middleware publishes about 30. A hostile document's 142,814 (under
 * the 1 MB cap) against an 8,000-character path held the server's event loop for 6.8 s per quote.
 */
const MAX_FREE_PATHS = 256;

/** The part of pay.json a price needs; free_paths is read when present. */
interface PayJsonPrices extends Pick<PayJson, 'version' | 'default_price_usd' | 'rules'> {
  payment: Pick<PayJson['payment'], 'network' | 'asset' | 'pay_to'>;
  free_paths?: PayJson['free_paths'];
}

/** The price of `url`'s path in `document`; throws a TypeError saying what is wrong with a document it cannot read. */
export function priceFromPayJson(document: unknown, url: string): PayJsonPrice {
  const doc = checked(document);
  const path = requestPath(url);
  if (path.length > MAX_URL_LENGTH)
    throw new TypeError(`pay.json: the path is longer than a gate prices (${MAX_URL_LENGTH} characters)`);
  if (isFreePath(doc.free_paths ?? [], path)) return { free: true };
  const micros = (text: string) => {
    const parsed = parsePriceUsd(text);
    if (!parsed.ok) throw new TypeError(`pay.json: price ${JSON.stringify(text)}: ${parsed.msg}`);
    return parsed.micros;
  };
  const table = compilePriceTable(
    doc.rules.map((rule) => ({ pattern: rule.path, micros: micros(rule.price_usd) })),
    micros(doc.default_price_usd),
  );
  const price = table.resolve(path).micros;
  if (price === 0n) return { free: true };
  if (doc.payment.pay_to === null) throw new TypeError('pay.json: the site has no pay_to yet, so nothing can be paid');
  return {
    free: false,
    offer: {
      x402_version: null,
      network: doc.payment.network,
      asset: doc.payment.asset,
      pay_to: doc.payment.pay_to,
      amount: price.toString(),
      price_usd: formatMicrosUsd(price),
    },
  };
}

function checked(document: unknown): PayJsonPrices {
  const doc = untrusted<PayJson>(document);
  if (doc?.version !== 1) throw new TypeError('pay.json: not a version 1 document');
  const rules = doc.rules;
  if (
    !Array.isArray(rules) ||
    !rules.every((rule: unknown) => {
      const r = untrusted<PayJson['rules'][number]>(rule);
      return typeof r?.path === 'string' && typeof r.price_usd === 'string';
    })
  )
    throw new TypeError('pay.json: rules must be [{path, price_usd}]');
  if (rules.length > MAX_RULES_PER_SITE)
    throw new TypeError(`pay.json: more than ${MAX_RULES_PER_SITE} rules, more than a site can set`);
  if (typeof doc.default_price_usd !== 'string') throw new TypeError('pay.json: default_price_usd must be a string');
  const payment = untrusted<PayJson['payment']>(doc.payment);
  // A network the agent knows and addresses, as the agent reads a 402's: a quote repeats them.
  if (
    chainIdOf(payment?.network) === null ||
    !isEvmAddress(payment?.asset) ||
    (payment?.pay_to !== null && !isEvmAddress(payment?.pay_to))
  )
    throw new TypeError('pay.json: payment must name network, asset and pay_to');
  if (
    doc.free_paths !== undefined &&
    !(Array.isArray(doc.free_paths) && doc.free_paths.every((glob: unknown) => typeof glob === 'string'))
  )
    throw new TypeError('pay.json: free_paths must be strings');
  if ((doc.free_paths?.length ?? 0) > MAX_FREE_PATHS)
    throw new TypeError(`pay.json: more than ${MAX_FREE_PATHS} free_paths`);
  return doc as PayJsonPrices;
}

/**
 * Whether a free_paths glob covers `path`. `**` is honoured only as a whole last segment
 * ("/.well-known/**": everything below), which is how the middleware writes it; the rest use the
 * pricing syntax, matched by core's linear matcher, so a hostile document cannot make matching slow.
 */
function isFreePath(globs: readonly string[], path: string): boolean {
  // An escaped slash is a segment break to some file servers: the middleware never frees such a path, nor do we.
  if (path.includes('%2F') || path.includes('\\')) return false;
  const plain: string[] = [];
  for (const glob of globs) {
    if (glob.endsWith('/**') && !glob.slice(0, -3).includes('*')) {
      if (path.startsWith(glob.slice(0, -2))) return true;
    } else if (!glob.includes('**')) plain.push(glob);
  }
  try {
    return (
      compilePriceTable(
        plain.map((pattern) => ({ pattern, micros: 0n })),
        1n,
      ).resolve(path).micros === 0n
    );
  } catch {
    return false; // a glob that is not a pattern frees nothing
  }
}
