/*
 * What the gate tells a server to do with a request. Framework-free: adapters map it onto their
 * request and response objects.
 */

export type Decision =
  /** Serve the request as if the gate were not there. */
  | { kind: 'pass' }
  /** Answer with this instead of the site's content; `body` is the serialised JSON. */
  | { kind: 'respond'; status: number; headers: Record<string, string>; body: string }
  /** A payment just settled: serve the request and add these headers to the site's response. */
  | { kind: 'pass-after-payment'; headers: Record<string, string> };

export const PASS: Decision = Object.freeze({ kind: 'pass' });

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
