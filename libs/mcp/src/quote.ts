/*
 * A page's price without paying. By default the page itself is asked, as fetch_page would ask it
 * (same User-Agent, no payment): its 402 names the price this request would cost, whatever the
 * site's bot policy says. That offers a gate the site counts (nothing is signed or sent on chain);
 * `pay.json` reads the site's published table instead and leaves the page alone.
 */

import { discardBody, readBodyText } from './body-text';
import { priceFromPayJson, type PayJsonPrice } from './pay-json-price';
import { networkAllows, offersOf402, type QuotedOffer } from './quoted-offers';
import { ToolError } from './refusals';
import type { WalletSession } from './session';

export type QuoteSource = 'page' | 'pay.json';

export interface Quote {
  url: string;
  /** Where the price came from: the page's answer, or the site's /.well-known/pay.json. */
  source: QuoteSource;
  /** The page's status when it was asked (402 when it named a price); null when only pay.json was read. */
  status: number | null;
  free: boolean;
  /** What fetch_page would pay: the first offer the agent may pay, else the first offer; "0" when free. */
  price_usd: string;
  offers: QuotedOffer[];
  within_max_price: boolean;
  within_budget: boolean;
  /** Whether some offer is on a network and token the agent pays with. */
  network_allowed: boolean;
  max_price_usd: string;
  remaining_usd: string;
}

const TIMEOUT_MS = 30_000;
/** pay.json with the API's 1,000 rules is about 100 kB. */
const MAX_PAY_JSON_CHARS = 1_000_000;

export async function quotePrice(session: WalletSession, url: URL, source: QuoteSource): Promise<Quote> {
  if (source === 'pay.json') return judged(session, url, 'pay.json', null, await publishedPrice(session, url));
  const response = await session.fetch(url, { headers: session.headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (response.status === 402) {
    const offers = await offersOf402(response);
    if (offers.length > 0) return judged(session, url, 'page', 402, { free: false, offers });
  } else {
    discardBody(response);
    // Served (or refused for another reason than payment): nothing to pay. A 5xx could be hiding a price.
    if (response.status < 500) return judged(session, url, 'page', response.status, { free: true, offers: [] });
  }
  return judged(session, url, 'pay.json', response.status, await publishedPrice(session, url, response.status));
}

/** The price in the site's pay.json, as a quote's offers. */
async function publishedPrice(
  session: WalletSession,
  url: URL,
  pageStatus?: number,
): Promise<{ free: boolean; offers: QuotedOffer[] }> {
  const where = `${url.origin}/.well-known/pay.json`;
  const page = pageStatus === undefined ? '' : `the page answered ${pageStatus} without a price we can read, and `;
  const noPrice = (why: string) =>
    new ToolError('no_price', `No price found: ${page}${why}`, pageStatus === undefined ? {} : { status: pageStatus });
  const response = await session.fetch(where, {
    headers: { ...session.headers, accept: 'application/json' },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  if (!response.ok) {
    discardBody(response);
    throw noPrice(`${where} answered ${response.status}`);
  }
  const { text, truncated } = await readBodyText(response, MAX_PAY_JSON_CHARS);
  let price: PayJsonPrice;
  try {
    if (text === null || truncated)
      throw new TypeError(`${where} is not a JSON document of at most ${MAX_PAY_JSON_CHARS} characters`);
    price = priceFromPayJson(JSON.parse(text), url.href);
  } catch (error) {
    throw noPrice(`${where}: ${(error as Error).message}`);
  }
  return price.free ? { free: true, offers: [] } : { free: false, offers: [price.offer] };
}

/** The quote, with how it stands against the limits now. */
async function judged(
  session: WalletSession,
  url: URL,
  source: QuoteSource,
  status: number | null,
  found: { free: boolean; offers: QuotedOffer[] },
): Promise<Quote> {
  const payable = found.offers.find((offer) => networkAllows(session.networks, offer));
  const chosen = payable ?? found.offers[0];
  const micros = chosen ? BigInt(chosen.amount) : 0n;
  const remaining = await session.remaining();
  return {
    url: url.href,
    source,
    status,
    free: found.free,
    price_usd: chosen?.price_usd ?? '0',
    offers: found.offers,
    within_max_price: micros <= session.maxPriceMicros,
    within_budget: micros <= remaining.micros,
    network_allowed: found.free || payable !== undefined,
    max_price_usd: session.maxPriceUsd,
    remaining_usd: remaining.usd,
  };
}
