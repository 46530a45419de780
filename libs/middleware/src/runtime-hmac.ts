/*
 * Which HMAC-SHA256 checks tokens and signs gates. node:crypto's is several times faster than the
 * pure-JS one core ships, but an import of node:crypto must stay out of the fetch entry, which
 * edge runtimes bundle. So the Node-only adapters (Express, Fastify, Nest) import it statically
 * (node-hmac.ts), and everywhere else it is asked of the runtime: Node (20.16+), Bun and Deno
 * answer process.getBuiltinModule('node:crypto'); a runtime without it gets core's pure-JS HMAC.
 */

import { hmacOf, hmacSha256, type CreateHmac, type HmacSha256 } from '@crawlgate/core';

/** node:crypto's HMAC when the runtime hands out node:crypto without an import, else core's pure-JS one. */
export function runtimeHmacSha256(): HmacSha256 {
  try {
    const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const crypto = process?.getBuiltinModule?.('node:crypto') as { createHmac?: CreateHmac } | undefined;
    if (typeof crypto?.createHmac === 'function') return hmacOf(crypto.createHmac);
  } catch {
    // A runtime that has the function but refuses the module: the pure-JS HMAC below.
  }
  return hmacSha256;
}
