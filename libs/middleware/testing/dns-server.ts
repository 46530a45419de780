/*
 * A small authoritative DNS server on loopback, for tests that resolve through Node's own resolver
 * (`new dns.promises.Resolver()` with `setServers([dns.server])`): PTR, A and AAAA records from a
 * table the test may change between queries, NXDOMAIN and NODATA as a real server answers them,
 * and SERVFAIL or silence on demand. UDP answers over 512 bytes are truncated (TC), so the same
 * port number also answers over TCP, where c-ares then retries.
 */

import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, isIPv4, isIPv6, type Server, type Socket } from 'node:net';

/**
 * Names as queried, matched case-insensitively and without a trailing dot. A key with an empty
 * list is a name without records of that type: NODATA, not NXDOMAIN.
 */
export interface DnsRecords {
  /** Keyed by reverse name, see `reverseName`. */
  ptr: Record<string, string[]>;
  a: Record<string, string[]>;
  /** Any IPv6 form. */
  aaaa: Record<string, string[]>;
}

export interface DnsQuery {
  /** Lower case, no trailing dot. */
  name: string;
  /** `TYPE<n>` for types this server has no records of. */
  type: 'PTR' | 'A' | 'AAAA' | string;
}

export interface DnsServer {
  port: number;
  /** `127.0.0.1:<port>`, for `Resolver.setServers`. */
  server: string;
  /** Every well-formed query, in order (a retry over TCP shows twice). */
  queries: DnsQuery[];
  /** 'servfail' answers RCODE 2 to everything; 'silent' never answers, so resolvers time out. */
  mode: 'answer' | 'servfail' | 'silent';
  close(): Promise<void>;
}

/** `end`: the offset just past the question, which answers echo. */
type Question = { name: string; type: number; qclass: number; end: number };

const TYPES: Record<number, keyof DnsRecords> = { 1: 'a', 28: 'aaaa', 12: 'ptr' };
const CLASS_IN = 1;
const TTL_SECONDS = 300;
const UDP_LIMIT = 512;
const [NOERROR, SERVFAIL, NXDOMAIN] = [0, 2, 3];

export async function startDnsServer(records: DnsRecords): Promise<DnsServer> {
  const { udp, tcp, port } = await bindSamePort();
  const connections = new Set<Socket>();
  const dns: DnsServer = {
    port,
    server: `127.0.0.1:${port}`,
    queries: [],
    mode: 'answer',
    close: async () => {
      connections.forEach((socket) => socket.destroy()); // c-ares keeps its TCP connections open
      await Promise.all([new Promise<void>((done) => udp.close(done)), new Promise((done) => tcp.close(done))]);
    },
  };
  const answer = (query: Buffer, limit: number): Buffer | undefined => {
    const question = parseQuestion(query);
    if (!question) return undefined;
    dns.queries.push({ name: question.name, type: typeName(question.type) });
    if (dns.mode === 'silent') return undefined;
    try {
      return respond(query, question, dns.mode === 'answer' ? lookup(records, question) : { rcode: SERVFAIL }, limit);
    } catch {
      return respond(query, question, { rcode: SERVFAIL }, limit); // a record that cannot be encoded
    }
  };
  udp.on('message', (query, peer) => {
    const response = answer(query, UDP_LIMIT);
    if (response) udp.send(response, peer.port, peer.address);
  });
  tcp.on('connection', (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      // Over TCP every message is preceded by its length, two bytes.
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const query = pending.subarray(2, 2 + pending.readUInt16BE(0));
        pending = pending.subarray(2 + query.length);
        const response = answer(query, 0xffff);
        if (response) socket.write(Buffer.concat([u16(response.length), response]));
      }
    });
  });
  return dns;
}

/** The name a PTR query for `address` asks: `4.3.2.1.in-addr.arpa`, or 32 nibbles then `ip6.arpa`. */
export function reverseName(address: string): string {
  if (isIPv4(address)) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  return `${[...ipv6Groups(address).join('')].reverse().join('.')}.ip6.arpa`;
}

/** The question of a standard query, or undefined for anything else (which gets no answer). */
function parseQuestion(query: Buffer): Question | undefined {
  if (query.length < 12) return undefined;
  const flags = query.readUInt16BE(2);
  const isResponse = (flags & 0x8000) !== 0;
  const opcode = (flags >> 11) & 0xf;
  if (isResponse || opcode !== 0 || query.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  while (at < query.length && query[at] !== 0) {
    const length = query[at];
    // Lengths over 63 are compression pointers, which a question has no use for.
    if (length > 63 || at + 1 + length >= query.length) return undefined;
    labels.push(query.toString('latin1', at + 1, at + 1 + length));
    at += 1 + length;
  }
  if (at + 5 > query.length) return undefined;
  return {
    name: labels.join('.').toLowerCase(),
    type: query.readUInt16BE(at + 1),
    qclass: query.readUInt16BE(at + 3),
    end: at + 5,
  };
}

function lookup(records: DnsRecords, question: Question): { rcode: number; rdata?: Buffer[] } {
  const field = question.qclass === CLASS_IN ? TYPES[question.type] : undefined;
  const values = field ? find(records[field], question.name) : undefined;
  if (field && values?.length) return { rcode: NOERROR, rdata: values.map((value) => encodeData(field, value)) };
  const known = Object.values(records).some((table) => find(table, question.name));
  return { rcode: known ? NOERROR : NXDOMAIN };
}

function find(table: Record<string, string[]>, name: string): string[] | undefined {
  return Object.entries(table).find(([key]) => key.toLowerCase().replace(/\.$/, '') === name)?.[1];
}

function respond(
  query: Buffer,
  question: Question,
  { rcode, rdata = [] }: { rcode: number; rdata?: Buffer[] },
  limit: number,
): Buffer {
  const answers = rdata.map((data) =>
    // The owner name is a pointer to the question's name, at offset 12.
    Buffer.concat([u16(0xc00c), u16(question.type), u16(CLASS_IN), u32(TTL_SECONDS), u16(data.length), data]),
  );
  const echoed = query.subarray(12, question.end);
  const truncated = 12 + echoed.length + answers.reduce((sum, answer) => sum + answer.length, 0) > limit;
  const recursionDesired = query.readUInt16BE(2) & 0x0100;
  // QR, AA, (TC), RD as asked, RA; opcode 0.
  const flags = 0x8000 | 0x0400 | (truncated ? 0x0200 : 0) | recursionDesired | 0x0080 | rcode;
  const sent = truncated ? [] : answers;
  const header = Buffer.concat([query.subarray(0, 2), u16(flags), u16(1), u16(sent.length), u16(0), u16(0)]);
  return Buffer.concat([header, echoed, ...sent]);
}

function encodeData(field: keyof DnsRecords, value: string): Buffer {
  if (field === 'aaaa') return Buffer.from(ipv6Groups(value).join(''), 'hex');
  if (field === 'ptr') return encodeName(value);
  if (!isIPv4(value)) throw new Error(`not an IPv4 address: ${value}`);
  return Buffer.from(value.split('.').map(Number));
}

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.');
  if (labels.some((label) => label.length === 0 || label.length > 63)) throw new Error(`not a domain name: ${name}`);
  return Buffer.concat([
    ...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'latin1')])),
    Buffer.from([0]),
  ]);
}

/** Eight groups of four hex digits, from any IPv6 form (`::`, an IPv4 tail, a zone). */
function ipv6Groups(address: string): string[] {
  if (!isIPv6(address)) throw new Error(`not an IP address: ${address}`);
  let text = address.replace(/%.*$/, '');
  const ipv4Tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (ipv4Tail) {
    const [a, b, c, d] = ipv4Tail.slice(1).map(Number);
    text = `${text.slice(0, ipv4Tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::').map((part) => (part ? part.split(':') : []));
  const groups = tail ? [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail] : head;
  return groups.map((group) => group.padStart(4, '0').toLowerCase());
}

function typeName(type: number): string {
  return TYPES[type]?.toUpperCase() ?? `TYPE${type}`;
}

function u16(value: number): Buffer {
  return Buffer.from([value >> 8, value & 0xff]);
}

function u32(value: number): Buffer {
  return Buffer.concat([u16(value >>> 16), u16(value & 0xffff)]);
}

/** A UDP socket and a TCP server on one port number; retried, as the port UDP got may be taken for TCP. */
async function bindSamePort(attempts = 10): Promise<{ udp: UdpSocket; tcp: Server; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const udp = createSocket('udp4');
    await new Promise<void>((resolve, reject) => udp.once('error', reject).bind(0, '127.0.0.1', resolve));
    const port = udp.address().port;
    const tcp = createServer();
    try {
      await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(port, '127.0.0.1', resolve));
      return { udp, tcp, port };
    } catch (error) {
      udp.close();
      if (attempt === attempts) throw error;
    }
  }
}
