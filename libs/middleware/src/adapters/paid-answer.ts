/*
 * A paid answer's headers, kept through the route. The gate sets them before the route runs (the
 * payer's token, its receipt, `Cache-Control: no-store`), and a route may set its own afterwards:
 * a site behind a CDN often sends `public, max-age=…`, and a shared cache would then store the
 * page and the payer's token and hand both to the next bot. So they are set again as the headers
 * go out, over whatever the route wrote (Node's writeHead, which end() and write() call too), and
 * from now on no one else sets or removes them: a middleware before the gate that wrapped
 * writeHead (on-headers, which compression and morgan use) runs its listeners after the gate's.
 */

import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';

type NodeResponse = ServerResponse | Http2ServerResponse;
type HeaderValue = string | string[] | number;

export function keepPaidAnswerHeaders(response: NodeResponse, headers: Record<string, string>): void {
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const writeHead = response.writeHead as (...args: unknown[]) => NodeResponse;
  const setHeader = response.setHeader as (this: NodeResponse, name: string, value: HeaderValue) => NodeResponse;
  const mutable = response as unknown as Record<'setHeader' | 'appendHeader' | 'removeHeader', unknown>;
  for (const method of ['setHeader', 'appendHeader', 'removeHeader'] as const) {
    const own = mutable[method];
    if (typeof own !== 'function') continue;
    mutable[method] = function (this: NodeResponse, name: unknown, ...rest: unknown[]) {
      if (typeof name === 'string' && names.has(name.toLowerCase()))
        return method === 'removeHeader' ? undefined : this;
      return own.call(this, name, ...rest);
    };
  }
  (response as { writeHead: unknown }).writeHead = function (
    this: NodeResponse,
    statusCode: number,
    ...rest: unknown[]
  ) {
    // writeHead(status, [message], [headers]), read as Node reads it: after a message the headers
    // are the next argument; with none, the third, else the second (`obj ??= reason`). They are
    // applied here, the gate's names left out, then the gate's headers, so the gate's win.
    const message = typeof rest[0] === 'string' ? rest[0] : undefined;
    const given = message === undefined ? (rest[1] ?? rest[0]) : rest[1];
    const entries = headerEntries(given);
    if (entries) {
      // As Node does with a list: what it names replaces what was set, its repeated names all sent.
      const values = new Map<string, { name: string; list: HeaderValue[] }>();
      for (const [name, value] of entries) {
        const key = name.toLowerCase();
        if (!names.has(key)) values.set(key, { name, list: [...(values.get(key)?.list ?? []), value] });
      }
      for (const { name, list } of values.values())
        this.setHeader(name, list.length === 1 ? list[0] : list.flatMap((v) => (Array.isArray(v) ? v : [String(v)])));
    }
    for (const [name, value] of Object.entries(headers)) setHeader.call(this, name, value);
    // A shape Node refuses (or ignores) is passed on as it is, for Node to judge.
    if (!entries) return writeHead.call(this, statusCode, ...rest);
    return message === undefined ? writeHead.call(this, statusCode) : writeHead.call(this, statusCode, message);
  };
  keepOnHttp2Stream(response, headers);
}

/**
 * HTTP/2: Http2ServerResponse applies the headers given to writeHead through an internal setter,
 * not setHeader, so a writeHead wrapped before the gate's could pass caching headers that no guard
 * above sees. The stream's respond(), respondWithFile() and respondWithFD() take every header that
 * goes out on it: the gate's are set there last. (A page the route pushes goes out on a stream of
 * its own, unpaid: a paid route must not push paid pages.)
 */
function keepOnHttp2Stream(response: NodeResponse, headers: Record<string, string>): void {
  const stream = (response as Partial<Http2ServerResponse>).stream as unknown as
    Record<'respond' | 'respondWithFile' | 'respondWithFD', unknown> | undefined;
  if (!stream) return;
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const withGateHeaders = (given: unknown): OutgoingHttpHeaders => {
    // Symbol keys (http2.sensitiveHeaders) are kept; a key named __proto__ is no header to copy.
    const kept: OutgoingHttpHeaders = {};
    const source = (given ?? {}) as Record<string | symbol, unknown>;
    for (const key of Reflect.ownKeys(source))
      if (typeof key === 'symbol' || (key !== '__proto__' && !names.has(key.toLowerCase())))
        (kept as Record<string | symbol, unknown>)[key] = source[key];
    for (const [name, value] of Object.entries(headers)) kept[name.toLowerCase()] = value;
    return kept;
  };
  for (const method of ['respond', 'respondWithFile', 'respondWithFD'] as const) {
    const own = stream[method];
    if (typeof own !== 'function') continue;
    // respond(headers, options); respondWithFile(path, headers, options); respondWithFD(fd, headers, options).
    const at = method === 'respond' ? 0 : 1;
    stream[method] = function (this: unknown, ...args: unknown[]) {
      args[at] = withGateHeaders(args[at]);
      // respondWithFile lets options.statCheck(stat, headers) change the headers before they go: set again after it.
      const options = args[at + 1] as
        { statCheck?: (stat: unknown, given: OutgoingHttpHeaders) => unknown } | undefined;
      const statCheck = options?.statCheck;
      if (typeof statCheck === 'function')
        args[at + 1] = {
          ...options,
          statCheck(this: unknown, stat: unknown, given: OutgoingHttpHeaders) {
            const answer = statCheck.call(this, stat, given);
            const kept = withGateHeaders(given);
            for (const key of Reflect.ownKeys(given)) delete (given as Record<string | symbol, unknown>)[key];
            Object.assign(given, kept);
            return answer;
          },
        };
      return own.apply(this, args);
    };
  }
}

/** The headers passed to writeHead as name and value pairs: an object, a flat list, a list of pairs; undefined for none of these. */
function headerEntries(given: unknown): [string, HeaderValue][] | undefined {
  if (given === undefined || given === null) return [];
  if (Array.isArray(given)) {
    if (given.every((item) => Array.isArray(item) && item.length === 2))
      return (given as [unknown, HeaderValue][]).map(([name, value]) => [String(name), value]);
    if (given.length % 2 !== 0) return undefined;
    const pairs: [string, HeaderValue][] = [];
    for (let i = 0; i < given.length; i += 2) pairs.push([String(given[i]), given[i + 1] as HeaderValue]);
    return pairs;
  }
  if (typeof given === 'object')
    return Object.entries(given as OutgoingHttpHeaders).filter(([, value]) => value !== undefined) as [
      string,
      HeaderValue,
    ][];
  return undefined;
}
