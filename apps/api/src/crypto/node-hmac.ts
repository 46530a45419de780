/*
 * node:crypto's HMAC-SHA256 for the API's gates and access tokens: the API only runs on Node, where
 * it is several times faster than core's pure-JS default (which the edge middleware keeps).
 */

import { hmacOf } from '@crawlgate/core';
import { createHmac } from 'node:crypto';

export const nodeHmacSha256 = hmacOf(createHmac);
