/*
 * Re-access with x402's sign-in-with-x: every 402 carries a challenge (a nonce MAC'ed with the
 * site's secret for this site and path, five minutes to answer); a wallet that paid for the path
 * answers it in a SIGN-IN-WITH-X header and the API gives back that payment's token. The page is
 * served only when that token opens this very path by the local check; a refusal falls through to
 * the usual 402, and an error, a timeout or any odd answer of the API is a 503 (fail closed either
 * way, and a wallet that paid is not asked to pay again because the API could not answer).
 */

import {
  MAX_SIWX_HEADER_LENGTH,
  readSiwxProof,
  SIGN_IN_WITH_X,
  SIGN_IN_WITH_X_HEADER,
  signSiwxNonce,
  siwxDeclaration,
  SIWX_CHALLENGE_SECONDS,
  verifySiwxNonce,
  type SiteOffer,
} from '@crawlgate/core';
import { CrawlgateApiError, type ApiClient } from './api-client';
import { isInternalAddress } from './crawler-ips';
import { notCharging, passAfterPayment, type Decision } from './decision';
import { headerValue, type HeaderRecord } from './request-headers';

/** Retry-After of a sign-in the API could not check (timeout, its limit, its error). */
const SIWX_RETRY_AFTER_SECONDS = 10;

export interface SiwxOptions {
  api: Pick<ApiClient, 'siwx'>;
  siteId: string;
  /** The local token check of the gate, for exactly this path, with these secrets. */
  tokenOpens(token: string, path: string, secrets: readonly string[]): boolean;
  warn(message: string): void;
}

export interface SiwxGate {
  /** `extensions` for the 402's PAYMENT-REQUIRED: the sign-in-with-x challenge for `path`, signed with the gate's `secret`. */
  challenge(site: SiteOffer, path: string, now: number, secret: string): Record<string, unknown>;
  /** Whether the request carries a sign-in proof: only then does reaccess ask the API. */
  presented(headers: HeaderRecord): boolean;
  /**
   * A pass with the paid token when the request proves its wallet paid for `path`; undefined
   * otherwise. `secrets`: those verifying under the terms the request is decided by (they may lapse
   * while the API answers): a proof whose nonce none of them signed for this path never reaches the
   * API. `ip`: the visitor's address, which the API counts sign-ins by.
   */
  reaccess(headers: HeaderRecord, path: string, secrets: readonly string[], ip?: string): Promise<Decision | undefined>;
}

export function createSiwxGate(options: SiwxOptions): SiwxGate {
  let warnedOfProxy = false;
  return {
    challenge(site, path, now, secret) {
      const exp = now + SIWX_CHALLENGE_SECONDS;
      const nonce = signSiwxNonce({ siteId: options.siteId, path }, exp, secret);
      return { [SIGN_IN_WITH_X]: siwxDeclaration({ domain: site.domain, path, caip2: site.caip2, nonce, exp }) };
    },

    presented: (headers) => headerValue(headers, SIGN_IN_WITH_X_HEADER) !== undefined,

    async reaccess(headers, path, secrets, ip) {
      const proof = headerValue(headers, SIGN_IN_WITH_X_HEADER);
      if (!proof || proof.length > MAX_SIWX_HEADER_LENGTH) return undefined;
      // Only a proof answering this gate's own live challenge for this path is worth an API call:
      // junk costs the API a request each (its sign-in limit counts per wallet a proof names).
      const read = readSiwxProof(proof);
      if (!read || !verifySiwxNonce(read.nonce, { siteId: options.siteId, path }, secrets).valid) return undefined;
      let access;
      try {
        access = await options.api.siwx({ proof, url: path, ...(ip ? { client_ip: ip } : {}) });
      } catch (error) {
        if (!(error instanceof CrawlgateApiError)) throw error;
        // Not a refusal: the wallet may have paid for this page. A 402 would have an x402 client
        // pay it again (and junk proofs that spend the route's limit would make every such wallet
        // do so); 503 says come back for the page it has.
        options.warn(`${error.message}; answering the sign-in with a 503`);
        if (error.status === 429 && ip !== undefined && isInternalAddress(ip) && !warnedOfProxy) {
          warnedOfProxy = true;
          options.warn(
            `the API limited sign-ins from ${ip}, a private or loopback address: if a proxy stands in front of this server, every visitor's sign-ins count as its address's, and junk sign-ins hold off every paying visitor's; let your framework trust the proxy by hop count or address (Express "trust proxy", Fastify trustProxy), or set crawlerIps.clientIp`,
          );
        }
        return signInUncheckable();
      }
      if (!access) return undefined;
      if (!options.tokenOpens(access.access_token, path, secrets)) {
        // The wallet paid for this page (a secret rotated meanwhile, say): a 402 would have it pay again.
        options.warn(
          `the API answered a sign-in with a token that does not open ${path} with the configured secret; answering 503`,
        );
        return signInUncheckable();
      }
      return passAfterPayment({ 'x-crawlgate-token': access.access_token });
    },
  };
}

/** 503: come back with the same sign-in for the page the wallet has, never a 402 asking it to pay again. */
function signInUncheckable(): Decision {
  // A payment sent with the sign-in is not sent either.
  return notCharging('The sign-in could not be checked right now; retry later', SIWX_RETRY_AFTER_SECONDS);
}
