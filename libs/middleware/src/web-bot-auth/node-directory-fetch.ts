/*
 * The key directory fetch on Node: the directory host's name is resolved here, every address it
 * resolves to must be public, and the connection goes to the address that was checked, so a name
 * that points (or, between two lookups, re-points) at a private, loopback or link-local address
 * is never reached. A client picks the Signature-Agent origin; without this, a public name of its
 * choosing would make the publisher's server send requests into its own network.
 *
 * Node-only (node:dns, node:http, node:https): the Express, Fastify and NestJS adapters use it by
 * default. Edge runtimes resolve names themselves and cannot check them; refusedOrigin still
 * refuses IP literals there.
 */

import type { LookupAddress, LookupAllOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { createDnsResolve } from './dns-resolve';
import { refusedAddress } from './key-directory';
import type { WebBotAuthOptions } from './index';

export interface NodeKeyDirectoryFetchOptions {
  /** Tests only: loopback addresses may be reached (with webBotAuth.allowLoopbackDirectories). */
  allowLoopback?: boolean;
  /** Resolves every address of a name; default through c-ares with the system's name servers (dns-resolve.ts). */
  resolve?: (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;
}

/** Who asks, for the agent operator's logs. */
export const KEY_DIRECTORY_USER_AGENT = 'Crawlgate-Middleware (Web Bot Auth key directory)';

/** Through c-ares, never getaddrinfo: a slow name server holds none of libuv's worker threads (dns-resolve.ts). */
let systemResolve: ReturnType<typeof createDnsResolve> | undefined;
const defaultResolve = (hostname: string, options: LookupAllOptions) =>
  (systemResolve ??= createDnsResolve())(hostname, options);

/** A fetch for key directories (GET, no redirects followed) that reaches public addresses only. */
export function nodeKeyDirectoryFetch(options: NodeKeyDirectoryFetchOptions = {}): typeof fetch {
  const resolve = options.resolve ?? defaultResolve;
  const allowLoopback = options.allowLoopback === true;

  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, { all: true, family: lookupOptions.family, hints: lookupOptions.hints }).then(
      (addresses) => {
        const refused = addresses.map((entry) => refusedAddress(entry.address, allowLoopback)).find((why) => why);
        if (addresses.length === 0 || refused) {
          const why = refused ? `resolves to ${refused}` : 'has no address';
          callback(Object.assign(new Error(`the key directory host ${hostname} ${why}`), { code: 'EREFUSED' }), '');
          return;
        }
        // Node asks for all addresses when it races IPv4 and IPv6 (autoSelectFamily), else for one.
        if ((lookupOptions as { all?: boolean }).all)
          (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };

  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        reject(new TypeError(`not an http(s) URL: ${url.protocol}`));
        return;
      }
      // Node looks up names only: an IP literal is checked here.
      const literal = url.hostname.replace(/^\[|\]$/g, '');
      const refused = isIP(literal) ? refusedAddress(literal, allowLoopback) : null;
      if (refused) {
        reject(new Error(`the key directory host ${url.hostname} is ${refused}`));
        return;
      }
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const request = send(
        url,
        {
          method: 'GET',
          headers: { 'user-agent': KEY_DIRECTORY_USER_AGENT, ...Object.fromEntries(new Headers(init?.headers)) },
          lookup: checkedLookup,
          // A connection of its own, closed after: directory fetches are rare, and a pooled socket
          // would keep the process alive.
          agent: false,
          signal: init?.signal ?? undefined,
        },
        (response) => {
          try {
            resolve(toResponse(response));
          } catch (error) {
            response.destroy();
            reject(error as Error);
          }
        },
      );
      request.on('error', reject);
      request.end();
    });
}

function toResponse(response: IncomingMessage): Response {
  const headers = new Headers();
  for (let i = 0; i + 1 < response.rawHeaders.length; i += 2)
    headers.append(response.rawHeaders[i], response.rawHeaders[i + 1]);
  return new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, {
    status: response.statusCode,
    headers,
  });
}

/** The options with key directories fetched by nodeKeyDirectoryFetch, unless they name a fetch of their own. */
export function withNodeKeyDirectoryFetch<T extends { webBotAuth?: WebBotAuthOptions }>(options: T): T {
  if (options.webBotAuth?.fetch) return options;
  const allowLoopback = options.webBotAuth?.allowLoopbackDirectories === true;
  return { ...options, webBotAuth: { ...options.webBotAuth, fetch: nodeKeyDirectoryFetch({ allowLoopback }) } };
}
