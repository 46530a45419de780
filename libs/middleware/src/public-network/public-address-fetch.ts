/*
 * A fetch on Node that reaches public addresses only, for URLs someone else picks: a
 * Signature-Agent's key directory (the middleware), a page an AI assistant was told to read (the
 * MCP server). Each host's name is resolved here, every address it resolves to must be public
 * (core's refusedAddress), and the connection goes to an address that was checked, so a name that
 * points (or, between two lookups, re-points) at a private, loopback or link-local address is never
 * reached. Redirects are followed hop by hop through the same check (or handed back, with
 * redirect: "manual"), so a public site cannot redirect it into the network behind it either.
 *
 * Node-only (node:dns, node:http, node:https). Bodies come back as sent: no Accept-Encoding is
 * added, so a server has no reason to compress.
 */

import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { refusedAddress } from '@crawlgate/core';
import { createDnsResolve } from './dns-resolve';

export interface PublicAddressFetchOptions {
  /** Loopback addresses may be reached too (tests, a set-up on one machine); other private ones never. */
  allowLoopback?: boolean;
  /** Resolves every address of a name; default through c-ares with the system's name servers (dns-resolve.ts). */
  resolve?: (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;
  /** A connection silent this long (no answer, or a body that stalls) fails. Default: 300 s, as fetch's own timeouts. */
  idleTimeoutMs?: number;
}

/** A request not sent: its host is, or resolves to, an address that is not public. */
export class PrivateAddressError extends Error {
  override readonly name = 'PrivateAddressError';
  constructor(
    /** The host as the URL names it. */
    readonly host: string,
    /** "is a loopback address", "resolves to a private, link-local or reserved address", … */
    readonly reason: string,
  ) {
    super(`${host} ${reason}`);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** undici's headersTimeout and bodyTimeout: what the global fetch waited before. */
const DEFAULT_IDLE_TIMEOUT_MS = 300_000;
/** fetch's own limit. */
const MAX_REDIRECTS = 20;
/** Not sent to another origin than the one they were set for, as fetch drops them. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/** Through c-ares, never getaddrinfo: a slow name server holds none of libuv's worker threads (dns-resolve.ts). */
let systemResolve: ReturnType<typeof createDnsResolve> | undefined;
const defaultResolve = (hostname: string, options: LookupAllOptions) =>
  (systemResolve ??= createDnsResolve())(hostname, options);

/** fetch (any method, headers, body, signal and redirect mode) that connects to public addresses only. */
export function publicAddressFetch(options: PublicAddressFetchOptions = {}): typeof fetch {
  const resolve = options.resolve ?? defaultResolve;
  const allowLoopback = options.allowLoopback === true;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;

  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, { all: true, family: lookupOptions.family, hints: lookupOptions.hints }).then(
      (addresses) => {
        const refused = addresses.map((entry) => refusedAddress(entry.address, allowLoopback)).find((why) => why);
        if (refused) return callback(new PrivateAddressError(hostname, `resolves to ${refused}`), '');
        if (addresses.length === 0)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        // Node asks for all addresses when it races IPv4 and IPv6 (autoSelectFamily), else for one.
        if ((lookupOptions as { all?: boolean }).all)
          (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };

  /** One request, its answer as it came (a redirect included). */
  const send = (url: URL, method: string, headers: Headers, body: Uint8Array | null, signal: AbortSignal) =>
    new Promise<Response>((resolve, reject) => {
      // Node looks up names only: an IP literal is checked here.
      const literal = url.hostname.replace(/^\[|\]$/g, '');
      const refused = isIP(literal) ? refusedAddress(literal, allowLoopback) : null;
      if (refused) return reject(new PrivateAddressError(url.hostname, `is ${refused}`));
      // localhost is loopback whatever a name server says of it (RFC 6761), with or without the root's dot.
      if (!allowLoopback && /(?:^|\.)localhost\.*$/i.test(url.hostname))
        return reject(new PrivateAddressError(url.hostname, 'is a loopback name'));
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        {
          method,
          headers: Object.fromEntries(headers),
          lookup: checkedLookup,
          // A connection of its own, closed after: a pooled socket would outlive the check of its
          // address (and keep the process alive).
          agent: false,
          signal,
        },
        (response) => {
          try {
            resolve(responseOf(response, url, method));
          } catch (error) {
            response.destroy();
            reject(error as Error);
          }
        },
      );
      request.setTimeout(idleTimeoutMs, () =>
        request.destroy(Object.assign(new Error(`no data for ${idleTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
      );
      request.on('error', (error) =>
        reject(
          signal.aborted
            ? signal.reason
            : error instanceof PrivateAddressError
              ? error
              : // As fetch fails: a TypeError whose cause says which (ECONNREFUSED, a DNS miss, …).
                new TypeError('fetch failed', { cause: error }),
        ),
      );
      request.end(body ?? undefined);
    });

  return async (input, init) => {
    const request = new Request(input, init);
    let url = new URL(request.url);
    let method = request.method;
    const headers = new Headers(request.headers);
    let body = request.body ? new Uint8Array(await request.arrayBuffer()) : null;
    for (let redirects = 0; ; redirects++) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:')
        throw new TypeError(`fetch failed: not an http(s) URL: ${url.protocol}`);
      if (body) headers.set('content-length', String(body.byteLength));
      const response = await send(url, method, headers, body, request.signal);
      const location = response.headers.get('location');
      if (request.redirect === 'manual' || !REDIRECTS.has(response.status) || location === null) {
        if (redirects > 0) Object.defineProperty(response, 'redirected', { value: true });
        return response;
      }
      await response.body?.cancel().catch(() => undefined);
      if (request.redirect === 'error')
        throw new TypeError(`fetch failed: ${url.href} redirected, and the request has redirect: "error"`);
      if (redirects === MAX_REDIRECTS) throw new TypeError(`fetch failed: more than ${MAX_REDIRECTS} redirects`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
      if (
        (response.status === 303 && method !== 'GET' && method !== 'HEAD') ||
        ((response.status === 301 || response.status === 302) && method === 'POST')
      ) {
        method = 'GET';
        body = null;
        for (const name of BODY_HEADERS) headers.delete(name);
      }
      url = next;
    }
  };
}

function responseOf(response: IncomingMessage, url: URL, method: string): Response {
  const headers = new Headers();
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
    headers.append(response.rawHeaders[i], response.rawHeaders[i + 1]);
  const status = response.statusCode ?? 0;
  // These have no body, and Response refuses one for them.
  const bodiless = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  if (bodiless) response.resume();
  const answer = new Response(bodiless ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>), {
    status,
    statusText: response.statusMessage,
    headers,
  });
  // As fetch's: the URL that answered.
  return Object.defineProperty(answer, 'url', { value: url.href });
}
