/*
 * IP addresses and CIDR prefixes as numbers in one 128-bit space, to ask whether a request's
 * address is in a crawler operator's published ranges. IPv4 lives at ::ffff:0:0/96, so an
 * IPv4-mapped address (what a dual-stack Node socket reports: "::ffff:66.249.66.1") and its
 * IPv4 form are the same number. Strict: anything that is not a plain address is refused (null),
 * never read as something else. Pure, no Node: edge runtimes run it too.
 */
import { refusedAddress } from '@crawlgate/core';

/** Addresses from `start` to `end`, both included. */
export interface AddressRange {
  readonly start: bigint;
  readonly end: bigint;
}

const IPV4_MAPPED = 0xffffn << 32n;
const ALL_128 = (1n << 128n) - 1n;

/** "203.0.113.9:4711" and "[2001:db8::1]:443", as some proxies write a client's address: the address alone; anything else as it is. */
export function withoutPort(text: string): string {
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::[0-9]{1,5})?$/.exec(text);
  if (bracketed) return bracketed[1];
  const v4 = /^([0-9]{1,3}(?:\.[0-9]{1,3}){3}):[0-9]{1,5}$/.exec(text);
  return v4 ? v4[1] : text;
}

/** The address as a 128-bit number; null for anything else (a zone, brackets, a port, a name). */
export function parseIp(text: string): bigint | null {
  if (text.includes('.') && !text.includes(':')) {
    const v4 = parseIpv4(text);
    return v4 === null ? null : IPV4_MAPPED | v4;
  }
  return parseIpv6(text);
}

/** "66.249.64.0/27" or "2001:4860:4801:10::/64": the addresses it covers; null when malformed. */
export function parsePrefix(text: string): AddressRange | null {
  const slash = text.indexOf('/');
  if (slash === -1 || !/^\d{1,3}$/.test(text.slice(slash + 1))) return null;
  const address = text.slice(0, slash);
  const isV4 = !address.includes(':');
  const length = Number(text.slice(slash + 1));
  if (length > (isV4 ? 32 : 128)) return null;
  const value = parseIp(address);
  if (value === null) return null;
  const hostBits = BigInt((isV4 ? 32 : 128) - length);
  const hostMask = (1n << hostBits) - 1n;
  const start = value & (ALL_128 ^ hostMask);
  return { start, end: start | hostMask };
}

function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    // No leading zeros: "010" is octal to some parsers and decimal to others.
    if (!/^(?:0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  // A dotted IPv4 may stand for the last two groups only ("::ffff:66.249.66.1").
  let body = text;
  let embedded: bigint | null = null;
  if (text.includes('.')) {
    const lastColon = text.lastIndexOf(':');
    embedded = parseIpv4(text.slice(lastColon + 1));
    if (embedded === null) return null;
    body = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] === '' ? [] : halves[0].split(':');
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1].split(':') : [];
  const written = head.length + tail.length;
  if (halves.length === 2 ? written > 7 : written !== 8) return null;
  let value = 0n;
  for (const group of [...head, ...Array<string>(8 - written).fill('0'), ...tail]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
    value = (value << 16n) | BigInt(`0x${group}`);
  }
  return embedded === null ? value : ((value >> 32n) << 32n) | embedded;
}

/** A private, loopback or reserved address (the mark of a proxy the framework was not told to trust). */
export const isInternalAddress = (address: string): boolean =>
  parseIp(address) !== null && refusedAddress(address, false) !== null;
