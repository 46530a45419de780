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
  /** What fetch_page would pay: the offer the agent would pay, else the first offer; "0" when free. */
  price_usd: string;
  /** Who that price is paid to; null when free. */
  pay_to: string | null;
  /** The offers read, the one priced first; at most MAX_OFFERS_LISTED of them. */
  offers: QuotedOffer[];
  offers_total: number;
  within_max_price: boolean;
  within_budget: boolean;
  /** Whether some offer is on a network and token the agent pays with. */
  network_allowed: boolean;
  max_price_usd: string;
  remaining_usd: string;
}

const TIMEOUT_MS = 30_000;
/** A site may name thousands of offers: the assistant is shown the one priced and a few more. */
export const MAX_OFFERS_LISTED = 10;
/** pay.json with the API's 1,000 rules is about 100 kB. */
const MAX_PAY_JSON_CHARS = 1_000_000;

export async function quotePrice(session: WalletSession, url: URL, source: QuoteSource): Promise<Quote> {
  if (source === 'pay.json') return judged(session, url, 'pay.json', null, await publishedPrice(session, url));
  const response = await session.fetch(url, { headers: session.headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
  // The page that answered, after redirects: its price and payee are another site's when a
  // redirect led there, and a quote naming the URL asked for would lend them that URL's trust.
  const answered = response.url ? new URL(response.url) : url;
  if (response.status === 402) {
    const { offers, payable } = await offersOf402(response, session.allowed);
    if (offers.length > 0) return judged(session, answered, 'page', 402, { free: false, offers, payable });
  } else {
    discardBody(response);
    // Served (or refused for another reason than payment): nothing to pay. A 5xx could be hiding a price.
    if (response.status < 500) return judged(session, answered, 'page', response.status, { free: true, offers: [] });
  }
  return judged(
    session,
    answered,
    'pay.json',
    response.status,
    await publishedPrice(session, answered, response.status),
  );
}

/** The price in the site's pay.json, as a quote's offers. */
async function publishedPrice(session: WalletSession, url: URL, pageStatus?: number): Promise<Found> {
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
  if (price.free) return { free: true, offers: [] };
  const payable = networkAllows(session.networks, price.offer) ? price.offer : undefined;
  return { free: false, offers: [price.offer], payable };
}

/** What a quote found: the offers, and the one the agent would pay. */
interface Found {
  free: boolean;
  offers: QuotedOffer[];
  payable?: QuotedOffer;
}

/** The quote, with how it stands against the limits now. */
async function judged(
  session: WalletSession,
  url: URL,
  source: QuoteSource,
  status: number | null,
  found: Found,
): Promise<Quote> {
  const { payable } = found;
  const chosen = payable ?? found.offers[0];
  const micros = chosen ? BigInt(chosen.amount) : 0n;
  const remaining = await session.remaining();
  const others = found.offers.filter((offer) => offer !== chosen);
  return {
    url: url.href,
    source,
    status,
    free: found.free,
    price_usd: chosen?.price_usd ?? '0',
    pay_to: chosen?.pay_to ?? null,
    offers: (chosen ? [chosen, ...others] : others).slice(0, MAX_OFFERS_LISTED),
    offers_total: found.offers.length,
    within_max_price: micros <= session.maxPriceMicros,
    within_budget: micros <= remaining.micros,
    network_allowed: found.free || payable !== undefined,
    max_price_usd: session.maxPriceUsd,
    remaining_usd: remaining.usd,
  };
}
