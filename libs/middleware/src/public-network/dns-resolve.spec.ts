import { pbkdf2 } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { createDnsResolve } from './dns-resolve';

const TYPE_A = 1;
const TYPE_AAAA = 28;

interface Records {
  a?: string[];
  /** Full form, eight groups. */
  aaaa?: string[];
}

/**
 * A name server on loopback: the A and AAAA records of `records` (NXDOMAIN for other names, NODATA
 * for a type a name lacks); no answer at all for names starting "silent."; SERVFAIL to AAAA
 * queries for names starting "servfail6.".
 */
async function startNameServer(records: Record<string, Records>): Promise<{ server: Socket; address: string }> {
  const server = createSocket('udp4');
  server.on('message', (query, peer) => {
    const { name, type, questionEnd } = readQuestion(query);
    if (name.startsWith('silent.')) return;
    const known = name in records;
    const failed = type === TYPE_AAAA && name.startsWith('servfail6.');
    const rcode = failed ? 2 : known ? 0 : 3;
    const addresses = !known || failed ? [] : ((type === TYPE_A ? records[name].a : records[name].aaaa) ?? []);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // id
    header.writeUInt16BE(0x8180 | rcode, 2); // a response, recursion available
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const answers = addresses.map((address) => {
      const data =
        type === TYPE_A
          ? Buffer.from(address.split('.').map(Number))
          : Buffer.concat(address.split(':').map((group) => Buffer.from(group.padStart(4, '0'), 'hex')));
      const answer = Buffer.alloc(12);
      answer.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      answer.writeUInt16BE(type, 2);
      answer.writeUInt16BE(1, 4); // IN
      answer.writeUInt32BE(60, 6); // TTL
      answer.writeUInt16BE(data.length, 10);
      return Buffer.concat([answer, data]);
    });
    server.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function readQuestion(query: Buffer): { name: string; type: number; questionEnd: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at] !== 0) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('ascii'));
    at += 1 + query[at];
  }
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1), questionEnd: at + 5 };
}

describe('createDnsResolve', () => {
  let nameServer: { server: Socket; address: string };
  beforeAll(async () => {
    nameServer = await startNameServer({
      'agent.test': { a: ['203.0.113.7', '203.0.113.8'], aaaa: ['2001:db8:0:0:0:0:0:7'] },
      'v6only.test': { aaaa: ['2001:db8:0:0:0:0:0:9'] },
      'servfail6.agent.test': { a: ['203.0.113.9'] },
      'servfail6.v6.test': { aaaa: ['2001:db8:0:0:0:0:0:a'] },
    });
  });
  afterAll(() => new Promise<void>((resolve) => nameServer.server.close(() => resolve())));

  const resolve = (timeoutMs?: number) => createDnsResolve({ servers: [nameServer.address], timeoutMs });

  it("answers a name's addresses, of every family or of the one asked", async () => {
    expect(await resolve()('agent.test', { all: true })).toEqual([
      { address: '203.0.113.7', family: 4 },
      { address: '203.0.113.8', family: 4 },
      { address: '2001:db8::7', family: 6 },
    ]);
    expect(await resolve()('agent.test', { all: true, family: 6 })).toEqual([{ address: '2001:db8::7', family: 6 }]);
    expect(await resolve()('agent.test', { all: true, family: 'IPv4' })).toHaveLength(2);
    expect(await resolve()('v6only.test', { all: true })).toEqual([{ address: '2001:db8::9', family: 6 }]);
  });

  it("answers one family's addresses when the other's query fails, and fails when nothing was answered", async () => {
    expect(await resolve()('servfail6.agent.test', { all: true })).toEqual([{ address: '203.0.113.9', family: 4 }]);
    await expect(resolve()('servfail6.agent.test', { all: true, family: 6 })).rejects.toMatchObject({
      code: 'ESERVFAIL',
    });
    await expect(resolve()('servfail6.v6.test', { all: true })).rejects.toMatchObject({ code: 'ESERVFAIL' });
  });

  it('answers no address for a name that does not exist', async () => {
    expect(await resolve()('nowhere.test', { all: true })).toEqual([]);
  });

  it('gives up on a name server that never answers, after its timeout', async () => {
    await expect(resolve(300)('silent.agent.test', { all: true })).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it("answers while every one of libuv's worker threads is busy (it holds none)", async () => {
    const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const order: string[] = [];
    // Each worker thread held for a while by a key derivation: getaddrinfo would queue behind them.
    const busy = Array.from(
      { length: threads },
      () =>
        new Promise<void>((done) =>
          pbkdf2('pw', 'salt', 400_000, 32, 'sha256', () => {
            order.push('worker');
            done();
          }),
        ),
    );
    const answered = resolve()('agent.test', { all: true }).then((addresses) => {
      order.push('dns');
      return addresses;
    });
    expect(await answered).toHaveLength(3);
    await Promise.all(busy);
    expect(order[0]).toBe('dns');
  });
});
