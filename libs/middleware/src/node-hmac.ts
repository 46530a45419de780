/*
 * node:crypto's HMAC-SHA256, for the adapters that only run on Node (Express, Fastify, Nest): a
 * static import works on every Node version. Never import this from the fetch entry (see
 * runtime-hmac.ts).
 */

import { createHmac } from 'node:crypto';
import { hmacOf } from '@crawlgate/core';

export const nodeHmacSha256 = hmacOf(createHmac);
