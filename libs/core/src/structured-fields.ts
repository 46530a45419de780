/*
 * Structured Field Values for HTTP (RFC 8941, updated by RFC 9651): the parts HTTP Message
 * Signatures use. Dictionaries and Items are parsed strictly, as the RFC's algorithms say (any
 * deviation fails the whole field), within bounds a hostile header cannot exceed; serialization
 * is the RFC's canonical form, which the signature base is built from.
 *
 * Not supported (the field fails to parse): RFC 9651 Display Strings. Dates are read as integers
 * would be and kept as type 'date'.
 */

import { base64Decode, base64Encode } from './base64url';

export type SfBareItem =
  | { type: 'integer'; value: number }
  | { type: 'decimal'; value: number }
  | { type: 'string'; value: string }
  | { type: 'token'; value: string }
  | { type: 'bytes'; value: Uint8Array }
  | { type: 'boolean'; value: boolean }
  | { type: 'date'; value: number };

/** Parameters in their order; a repeated key keeps its first place and its last value (RFC 8941 4.2.3.2). */
export type SfParameters = Map<string, SfBareItem>;
export interface SfItem {
  kind: 'item';
  value: SfBareItem;
  params: SfParameters;
}
export interface SfInnerList {
  kind: 'inner-list';
  items: SfItem[];
  params: SfParameters;
}
export type SfMember = SfItem | SfInnerList;
export type SfDictionary = Map<string, SfMember>;

/**
 * Bounds for hostile input: far above what a signature header carries. Members and parameters are
 * counted as parsed, a repeated key each time (it costs a parse each time).
 */
export const SF_LIMITS = Object.freeze({ fieldLength: 8192, members: 32, innerListItems: 64, parameters: 32 });

class SfError extends Error {}

/** RFC 8941 4.2 with the Dictionary top-level type; null when the text is not one. */
export function parseSfDictionary(text: string): SfDictionary | null {
  return parseField(text, (p) => p.dictionary());
}

/** RFC 8941 4.2 with the Item top-level type; null when the text is not one. */
export function parseSfItem(text: string): SfItem | null {
  return parseField(text, (p) => p.item());
}

function parseField<T>(text: string, top: (parser: Parser) => T): T | null {
  if (typeof text !== 'string' || text.length > SF_LIMITS.fieldLength) return null;
  try {
    const parser = new Parser(text);
    parser.skip(' ');
    const value = top(parser);
    parser.skip(' ');
    if (!parser.done()) return null;
    return value;
  } catch (error) {
    if (error instanceof SfError) return null;
    throw error;
  }
}

/** Character classes by char code, so the hot loops test a table entry, not a regular expression. */
function charTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < chars.length; i++) table[chars.charCodeAt(i)] = 1;
  return table;
}
const DIGITS = '0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALPHA = LOWER + LOWER.toUpperCase();
/** tchar, plus ":" and "/" (RFC 8941 sf-token). */
const TOKEN_CHAR = charTable(`!#$%&'*+-.^_\`|~${DIGITS}${ALPHA}:/`);
const KEY_FIRST = charTable(`${LOWER}*`);
const KEY_REST = charTable(`${LOWER}${DIGITS}_-.*`);
const BASE64_CHAR = charTable(`${ALPHA}${DIGITS}+/=`);
const inTable = (table: Uint8Array, code: number) => code < 128 && table[code] === 1;

class Parser {
  private at = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length;
  }
  private peek(): string {
    return this.text[this.at] ?? '';
  }
  skip(chars: string): void {
    while (!this.done() && chars.includes(this.peek())) this.at++;
  }
  private fail(): never {
    throw new SfError();
  }

  dictionary(): SfDictionary {
    const members: SfDictionary = new Map();
    let parsed = 0;
    while (!this.done()) {
      const key = this.key();
      let member: SfMember;
      if (this.peek() === '=') {
        this.at++;
        member = this.itemOrInnerList();
      } else {
        member = { kind: 'item', value: { type: 'boolean', value: true }, params: this.parameters() };
      }
      members.set(key, member);
      if (++parsed > SF_LIMITS.members) this.fail();
      this.skip(' \t');
      if (this.done()) return members;
      if (this.peek() !== ',') this.fail();
      this.at++;
      this.skip(' \t');
      if (this.done()) this.fail(); // a trailing comma
    }
    return members;
  }

  item(): SfItem {
    return { kind: 'item', value: this.bareItem(), params: this.parameters() };
  }

  private itemOrInnerList(): SfMember {
    return this.peek() === '(' ? this.innerList() : this.item();
  }

  private innerList(): SfInnerList {
    this.at++; // "("
    const items: SfItem[] = [];
    for (;;) {
      this.skip(' ');
      if (this.peek() === ')') {
        this.at++;
        return { kind: 'inner-list', items, params: this.parameters() };
      }
      items.push(this.item());
      if (items.length > SF_LIMITS.innerListItems) this.fail();
      const next = this.peek();
      if (next !== ' ' && next !== ')') this.fail();
    }
  }

  private parameters(): SfParameters {
    const params: SfParameters = new Map();
    let parsed = 0;
    while (this.peek() === ';') {
      this.at++;
      this.skip(' ');
      const key = this.key();
      let value: SfBareItem = { type: 'boolean', value: true };
      if (this.peek() === '=') {
        this.at++;
        value = this.bareItem();
      }
      params.set(key, value);
      if (++parsed > SF_LIMITS.parameters) this.fail();
    }
    return params;
  }

  private key(): string {
    if (!inTable(KEY_FIRST, this.text.charCodeAt(this.at))) this.fail();
    const start = this.at++;
    while (inTable(KEY_REST, this.text.charCodeAt(this.at))) this.at++;
    return this.text.slice(start, this.at);
  }

  private bareItem(): SfBareItem {
    const c = this.peek();
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    if (c === '"') return { type: 'string', value: this.string() };
    if (c === '*' || (c.length === 1 && ALPHA.includes(c))) return { type: 'token', value: this.token() };
    if (c === ':') return { type: 'bytes', value: this.bytes() };
    if (c === '?') return { type: 'boolean', value: this.boolean() };
    if (c === '@') {
      this.at++;
      const date = this.number();
      if (date.type !== 'integer') this.fail();
      return { type: 'date', value: date.value };
    }
    return this.fail();
  }

  /** RFC 8941 4.2.4: at most 15 integer digits; decimals at most 12 before and 3 after the point. */
  private number(): { type: 'integer' | 'decimal'; value: number } {
    const start = this.at;
    if (this.peek() === '-') this.at++;
    const digitsStart = this.at;
    if (!/[0-9]/.test(this.peek())) this.fail();
    let point = -1;
    while (!this.done()) {
      const c = this.peek();
      if (c >= '0' && c <= '9') this.at++;
      else if (c === '.' && point < 0) {
        if (this.at - digitsStart > 12) this.fail();
        point = this.at++;
      } else break;
      if (point < 0 && this.at - digitsStart > 15) this.fail();
      if (point >= 0 && this.at - digitsStart > 16) this.fail();
    }
    const text = this.text.slice(start, this.at);
    if (point < 0) return { type: 'integer', value: Number(text) };
    const fraction = this.at - point - 1;
    if (fraction < 1 || fraction > 3) this.fail();
    return { type: 'decimal', value: Number(text) };
  }

  private string(): string {
    this.at++; // opening quote
    let out = '';
    let from = this.at; // start of the run of plain characters not yet copied to `out`
    for (;;) {
      const code = this.text.charCodeAt(this.at);
      if (code === 0x22 /* " */) {
        out += this.text.slice(from, this.at++);
        return out;
      }
      if (code === 0x5c /* \ */) {
        const next = this.text.charCodeAt(this.at + 1);
        if (next !== 0x22 && next !== 0x5c) this.fail();
        out += this.text.slice(from, this.at) + String.fromCharCode(next);
        this.at += 2;
        from = this.at;
        continue;
      }
      // Also the end of the text (NaN): an unterminated string.
      if (!(code >= 0x20 && code <= 0x7e)) this.fail();
      this.at++;
    }
  }

  private token(): string {
    const start = this.at++;
    while (inTable(TOKEN_CHAR, this.text.charCodeAt(this.at))) this.at++;
    return this.text.slice(start, this.at);
  }

  private bytes(): Uint8Array {
    const start = ++this.at;
    while (inTable(BASE64_CHAR, this.text.charCodeAt(this.at))) this.at++;
    if (this.peek() !== ':') this.fail();
    const decoded = base64Decode(this.text.slice(start, this.at++));
    return decoded ?? this.fail();
  }

  private boolean(): boolean {
    this.at++;
    const c = this.text[this.at++];
    if (c === '1') return true;
    if (c === '0') return false;
    return this.fail();
  }
}

/** RFC 8941 4.1: the canonical text of a member (an Item or an Inner List). */
export function serializeSfMember(member: SfMember): string {
  return member.kind === 'item' ? serializeSfItem(member) : serializeSfInnerList(member);
}

export function serializeSfItem(item: SfItem): string {
  return serializeBareItem(item.value) + serializeParams(item.params);
}

export function serializeSfInnerList(list: SfInnerList): string {
  return `(${list.items.map(serializeSfItem).join(' ')})${serializeParams(list.params)}`;
}

export function serializeSfDictionary(dictionary: SfDictionary): string {
  return [...dictionary]
    .map(([key, member]) =>
      member.kind === 'item' && member.value.type === 'boolean' && member.value.value
        ? key + serializeParams(member.params)
        : `${key}=${serializeSfMember(member)}`,
    )
    .join(', ');
}

function serializeParams(params: SfParameters): string {
  let out = '';
  for (const [key, value] of params)
    out += value.type === 'boolean' && value.value ? `;${key}` : `;${key}=${serializeBareItem(value)}`;
  return out;
}

function serializeBareItem(item: SfBareItem): string {
  switch (item.type) {
    case 'integer':
      return String(item.value);
    case 'decimal': {
      const text = String(Math.round(item.value * 1000) / 1000);
      return text.includes('.') ? text : `${text}.0`;
    }
    case 'string':
      return `"${item.value.replace(/[\\"]/g, '\\$&')}"`;
    case 'token':
      return item.value;
    case 'bytes':
      return `:${base64Encode(item.value)}:`;
    case 'boolean':
      return item.value ? '?1' : '?0';
    case 'date':
      return `@${item.value}`;
  }
}

/** Shorthands for building items. */
export const sf = {
  string: (value: string, params: SfParameters = new Map()): SfItem => ({
    kind: 'item',
    value: { type: 'string', value },
    params,
  }),
  integer: (value: number): SfBareItem => ({ type: 'integer', value }),
  text: (value: string): SfBareItem => ({ type: 'string', value }),
};
