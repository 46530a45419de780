/*
 * Limits the API, the middleware and the SDKs share: defined once, so no package copies another's default.
 */

/** The longest request URL a gate is opened for (POST /v1/gates takes at most this many characters). */
export const MAX_URL_LENGTH = 2048;
/** The most price rules a site has (PUT /v1/sites/{id}/pricing), and so a pay.json an agent reads. */
export const MAX_RULES_PER_SITE = 1000;
/**
 * What a site's prices may take compiled, every table a router's keying builds included (site-prices.ts
 * sitePricesHeapBytes: six tables, ten with a negated class): 1,000 plain rules take about 6 MB, and
 * 250 rules of 500 stars each took 1.5 GB, and seconds of CPU to compile.
 */
export const MAX_SITE_PRICES_HEAP_BYTES = 24 * 1024 * 1024;
/**
 * Beyond the settlement timeout, how long the secret that signed a gate must still verify for a
 * payment of the gate to be taken (API) and for the gate to be offered (middleware): the payment's
 * token is signed with that secret.
 */
export const SECRET_SETTLEMENT_MARGIN_SECONDS = 60;
/** The latest instant a token or gate may name, 9999-12-31T23:59:59Z: also catches milliseconds passed where seconds are meant. */
export const MAX_UNIX_SECONDS = 253_402_300_799;
/** An authorization may be valid for at most this long: x402 clients sign validBefore = now + maxTimeoutSeconds. */
export const MAX_AUTHORIZATION_SECONDS = 300;
/** Default lifetime of an unpaid gate (GATE_TTL_SECONDS overrides it in the API, which tells its middleware). */
export const DEFAULT_GATE_TTL_SECONDS = 15 * 60;
/** A publisher's password: at least this many characters (POST /v1/publishers)... */
export const MIN_PASSWORD_LENGTH = 8;
/** ...and at most this many, which bounds the work of hashing it. */
export const MAX_PASSWORD_LENGTH = 256;
/** Items per page of a list (`?limit=`) when none is asked for... */
export const DEFAULT_PAGE_SIZE = 20;
/** ...and the most a page holds. */
export const MAX_PAGE_SIZE = 100;
/** The most read of a site's 402 or payment answer by an agent: they hold a few kilobytes, and more is a hostile site's. */
export const MAX_PAYMENT_ANSWER_BYTES = 1024 * 1024;
/**
 * How long a 402 or a payment's answer (a site's, or its gate API's) may take to arrive whole once
 * its headers came: a few kilobytes of JSON. Later, it is unreadable: a site trickling it a byte at
 * a time would hold the payment, and its price in an agent's budget, for as long as it liked.
 */
export const MAX_PAYMENT_ANSWER_MS = 10_000;
/**
 * The longest x402 payment header (X-PAYMENT, PAYMENT-SIGNATURE) a gate decodes. The largest part
 * of an honest one is the gate id it echoes (MAX_GATE_ID_LENGTH); runtimes with no header limit of
 * their own (Deno, Bun) would otherwise decode megabytes per request.
 */
export const MAX_PAYMENT_HEADER_LENGTH = 64 * 1024;
