/*
 * Limits the API, the middleware and the SDKs share: defined once, so no package copies another's default.
 */

/** The longest request URL a gate is opened for (POST /v1/gates takes at most this many characters). */
export const MAX_URL_LENGTH = 2048;
/** An authorization may be valid for at most this long: x402 clients sign validBefore = now + maxTimeoutSeconds. */
export const MAX_AUTHORIZATION_SECONDS = 300;
/** Default lifetime of an unpaid gate (GATE_TTL_SECONDS overrides it in the API, which tells its middleware). */
export const DEFAULT_GATE_TTL_SECONDS = 15 * 60;
