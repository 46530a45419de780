/*
 * HTTP Message Signatures (RFC 9421), the request side: the signature base a signer signs and a
 * verifier rebuilds, from the covered components of a request. Only what Web Bot Auth needs:
 * the derived components @method, @authority, @path and @query, and header fields, whole or one
 * member of a Dictionary field (`;key="…"`). Any other component or parameter makes the base
 * unbuildable (null), so an unsupported signature never verifies.
 */

import {
  parseSfDictionary,
  serializeSfInnerList,
  serializeSfItem,
  serializeSfMember,
  type SfInnerList,
  type SfItem,
} from './structured-fields';

/** A request as the signature sees it. */
export interface SignedRequestView {
  method: string;
  /** Host and port as the request addressed them (the Host header or the URL's). */
  authority: string;
  /** The absolute path as sent, without the query. */
  path: string;
  /** "?" and the query as sent, or "" for none. */
  query: string;
  /** A header's field value, its lines combined with ", "; undefined when absent. */
  header(name: string): string | undefined;
}

const DERIVED = new Set(['@method', '@authority', '@path', '@query']);
/** A field name: lower-case token characters (RFC 9421 2.1). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/** The name a covered component identifier names, with its `key` when it has one: "signature-agent;key=sig1". */
export function componentName(component: SfItem): string | null {
  if (component.value.type !== 'string') return null;
  const key = component.params.get('key');
  if (component.params.size === 0) return component.value.value;
  if (component.params.size === 1 && key?.type === 'string') return `${component.value.value};key=${key.value}`;
  return null;
}

/** RFC 9421 2.1–2.2: the value a component identifier stands for in this request, or null. */
export function componentValue(request: SignedRequestView, component: SfItem): string | null {
  if (component.value.type !== 'string') return null;
  const name = component.value.value;
  const key = component.params.get('key');
  const onlyKey = component.params.size === 0 || (component.params.size === 1 && key?.type === 'string');
  if (!onlyKey) return null; // sf, bs, req, tr, name: not supported here
  let value: string | undefined;
  if (name.startsWith('@')) {
    if (!DERIVED.has(name) || component.params.size > 0) return null;
    if (name === '@method') value = request.method;
    else if (name === '@authority') value = normalizedAuthority(request.authority);
    else if (name === '@path') value = request.path === '' ? '/' : request.path;
    else value = request.query === '' ? '?' : request.query;
  } else {
    if (!FIELD_NAME.test(name)) return null;
    const field = request.header(name);
    if (field === undefined) return null;
    if (key?.type === 'string') {
      const member = parseSfDictionary(field)?.get(key.value);
      value = member && serializeSfMember(member);
    } else value = field.trim();
  }
  // A line break would let one value forge the lines after it.
  return value === undefined || /[\r\n]/.test(value) ? null : value;
}

/** RFC 9421 2.2.3: lower case, without the default port of either scheme (the scheme is not always known here). */
export function normalizedAuthority(authority: string): string {
  return authority.toLowerCase().replace(/:(?:443|80)$/, '');
}

/**
 * RFC 9421 2.5: the signature base for `params` (the covered components and the signature's
 * parameters, as Signature-Input carries them). Null when a component is missing, repeated or
 * not supported.
 */
export function signatureBase(request: SignedRequestView, params: SfInnerList): string | null {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const component of params.items) {
    const identifier = serializeSfItem(component);
    if (seen.has(identifier)) return null;
    seen.add(identifier);
    const value = componentValue(request, component);
    if (value === null) return null;
    lines.push(`${identifier}: ${value}`);
  }
  lines.push(`"@signature-params": ${serializeSfInnerList(params)}`);
  return lines.join('\n');
}
