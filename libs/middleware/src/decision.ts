/*
 * What the gate tells a server to do with a request. Framework-free: adapters map it onto their
 * request and response objects.
 */

import type { GateNotCharging } from '@crawlgate/core';

export type Decision =
  /** Serve the request as if the gate were not there. */
  | { kind: 'pass' }
  /** Answer with this instead of the site's content; `body` is the serialised JSON. */
  | { kind: 'respond'; status: number; headers: Record<string, string>; body: string }
  /** A payment just settled: serve the request and add these headers to the site's response. */
  | { kind: 'pass-after-payment'; headers: Record<string, string> };

export const PASS: Decision = Object.freeze({ kind: 'pass' });

/**
 * What keeps a paid answer (the page, with the payer's token) out of every shared cache:
 * Cache-Control, and the headers CDNs obey instead of it when a route sends them (CDN-Cache-Control,
 * Cloudflare's, Vercel's and Netlify's own, Fastly's Surrogate-Control, Akamai's Edge-Control,
 * nginx's X-Accel-Expires; 0 turns its caching off).
 */
const NOT_STORED = {
  'cache-control': 'no-store',
  'cdn-cache-control': 'no-store',
  'cloudflare-cdn-cache-control': 'no-store',
  'vercel-cdn-cache-control': 'no-store',
  'netlify-cdn-cache-control': 'no-store',
  'surrogate-control': 'no-store',
  'edge-control': 'no-store',
  'x-accel-expires': '0',
};

/** A payment settled (or a paid page read again): serve the request with `headers`, never stored by a shared cache. */
export function passAfterPayment(headers: Record<string, string>): Decision {
  return { kind: 'pass-after-payment', headers: { ...headers, ...NOT_STORED } };
}

/** 503 that took nothing: a payment sent with the request went no further (core's GateNotCharging). */
export function notCharging(detail: string, retryAfterSeconds: number): Decision {
  return respondJson(503, { detail, charged: false } satisfies GateNotCharging, {
    'retry-after': String(retryAfterSeconds),
  });
}

/**
 * A JSON answer. Gate answers depend on who asks (user agent, token), so nothing may cache them:
 * a CDN keeping a 402 or 403 would show it to people.
 */
export function respondJson(status: number, body: unknown, headers: Record<string, string> = {}): Decision {
  return {
    kind: 'respond',
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  };
}
