import { createSocket } from 'node:dgram';
import { promises as dnsPromises } from 'node:dns';
import { reverseName, startDnsServer, type DnsRecords, type DnsServer } from './dns-server';

describe('reverseName', () => {
  it('reverses the octets of an IPv4 address under in-addr.arpa', () => {
    expect(reverseName('66.249.66.1')).toBe('1.66.249.66.in-addr.arpa');
  });

  it('reverses the 32 nibbles of an IPv6 address under ip6.arpa, whatever its form', () => {
    const expanded = '7.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa';
    expect(reverseName('2001:db8::7')).toBe(expanded);
    expect(reverseName('2001:0DB8:0:0:0:0:0:0007')).toBe(expanded);
    expect(reverseName('::ffff:192.0.2.1')).toBe(
      '1.0.2.0.0.0.0.c.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa',
    );
  });

  it('refuses what is not an IP address', () => {
    expect(() => reverseName('crawler.example')).toThrow('not an IP address');
  });
});

describe('startDnsServer, through Node’s own resolver', () => {
  let records: DnsRecords;
  let dns: DnsServer;
  let resolver: dnsPromises.Resolver;

  beforeEach(async () => {
    records = {
      ptr: {
        [reverseName('203.0.113.7')]: ['crawl-7.bot.example'],
        [reverseName('2001:db8::7')]: ['crawl-7.bot.example', 'alias.bot.example.'],
      },
      a: { 'crawl-7.bot.example': ['203.0.113.7', '203.0.113.8'], 'nodata.bot.example': [] },
      aaaa: { 'crawl-7.bot.example': ['2001:db8::7'] },
    };
    dns = await startDnsServer(records);
    resolver = new dnsPromises.Resolver({ timeout: 300, tries: 1 });
    resolver.setServers([dns.server]);
  });
  afterEach(() => dns.close());

  it('answers PTR queries for IPv4 and IPv6 addresses', async () => {
    expect(await resolver.reverse('203.0.113.7')).toEqual(['crawl-7.bot.example']);
    expect(await resolver.reverse('2001:db8::7')).toEqual(['crawl-7.bot.example', 'alias.bot.example']);
    expect(dns.queries).toEqual([
      { name: '7.113.0.203.in-addr.arpa', type: 'PTR' },
      { name: reverseName('2001:db8::7'), type: 'PTR' },
    ]);
  });

  it('answers A and AAAA queries, with a TTL of 300 seconds', async () => {
    expect(await resolver.resolve4('crawl-7.bot.example')).toEqual(['203.0.113.7', '203.0.113.8']);
    expect(await resolver.resolve6('crawl-7.bot.example')).toEqual(['2001:db8::7']);
    expect(await resolver.resolve4('crawl-7.bot.example', { ttl: true })).toEqual([
      { address: '203.0.113.7', ttl: 300 },
      { address: '203.0.113.8', ttl: 300 },
    ]);
    expect(dns.queries.map(({ type }) => type)).toEqual(['A', 'AAAA', 'A']);
  });

  it('matches names case-insensitively, with or without a trailing dot', async () => {
    records.a['Mixed.Bot.Example.'] = ['203.0.113.9'];
    expect(await resolver.resolve4('mixed.BOT.example')).toEqual(['203.0.113.9']);
    expect(await resolver.resolve4('CRAWL-7.bot.example.')).toEqual(['203.0.113.7', '203.0.113.8']);
    expect(dns.queries.map(({ name }) => name)).toEqual(['mixed.bot.example', 'crawl-7.bot.example']);
  });

  it('follows changes to the records between queries', async () => {
    records.ptr[reverseName('203.0.113.7')] = ['spoofed.example'];
    expect(await resolver.reverse('203.0.113.7')).toEqual(['spoofed.example']);
  });

  it('answers NXDOMAIN for an unknown name (ENOTFOUND), also to PTR queries', async () => {
    await expect(resolver.resolve4('unknown.bot.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolver.reverse('198.51.100.1')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('answers NODATA for a name with records of other types only (ENODATA)', async () => {
    delete records.aaaa['crawl-7.bot.example'];
    await expect(resolver.resolve6('crawl-7.bot.example')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolve4('nodata.bot.example')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  // reverse() goes through c-ares' getHostByAddr, which reports every failure as ENOTFOUND;
  // resolvePtr() of the reverse name tells a failing server from a missing record.
  it('answers SERVFAIL to everything in servfail mode (ESERVFAIL, but ENOTFOUND from reverse())', async () => {
    dns.mode = 'servfail';
    await expect(resolver.resolvePtr(reverseName('203.0.113.7'))).rejects.toMatchObject({ code: 'ESERVFAIL' });
    await expect(resolver.resolve4('crawl-7.bot.example')).rejects.toMatchObject({ code: 'ESERVFAIL' });
    await expect(resolver.reverse('203.0.113.7')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('never answers in silent mode (ETIMEOUT, but ENOTFOUND from reverse()), yet records the queries', async () => {
    dns.mode = 'silent';
    await expect(resolver.resolve4('crawl-7.bot.example')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(resolver.reverse('203.0.113.7')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(dns.queries).toEqual([
      { name: 'crawl-7.bot.example', type: 'A' },
      { name: '7.113.0.203.in-addr.arpa', type: 'PTR' },
    ]);
  });

  it('truncates an answer over 512 bytes, which the resolver then asks again over TCP', async () => {
    const many = Array.from({ length: 40 }, (_, i) => `203.0.113.${i + 10}`);
    records.a['many.bot.example'] = many;
    expect(await resolver.resolve4('many.bot.example')).toEqual(many);
    expect(dns.queries).toEqual([
      { name: 'many.bot.example', type: 'A' },
      { name: 'many.bot.example', type: 'A' },
    ]);
  });

  it('encodes the header, the question and a compressed answer as on the wire', async () => {
    // id 0x1234, RD; one question: crawl-7.bot.example A IN.
    const question = Buffer.from('07637261776c2d3703626f74076578616d706c65' + '00' + '0001' + '0001', 'hex');
    const query = Buffer.concat([Buffer.from('123401000001000000000000', 'hex'), question]);
    const client = createSocket('udp4');
    const response = await new Promise<Buffer>((received) => {
      client.once('message', received);
      client.send(query, dns.port, '127.0.0.1');
    });
    client.close();
    expect(response.subarray(0, 12).toString('hex')).toBe('1234' + '8580' + '0001' + '0002' + '0000' + '0000');
    expect(response.subarray(12, 12 + question.length)).toEqual(question);
    const answer = response.subarray(12 + question.length, 12 + question.length + 16).toString('hex');
    expect(answer).toBe('c00c' + '0001' + '0001' + '0000012c' + '0004' + 'cb007107');
  });

  it('ignores malformed packets', async () => {
    const client = createSocket('udp4');
    const garbage = [Buffer.from([1, 2, 3]), Buffer.from('000001000001000000000000ff', 'hex')];
    for (const packet of garbage) await new Promise((sent) => client.send(packet, dns.port, '127.0.0.1', sent));
    client.close();
    expect(await resolver.resolve4('crawl-7.bot.example')).toEqual(['203.0.113.7', '203.0.113.8']);
    expect(dns.queries).toEqual([{ name: 'crawl-7.bot.example', type: 'A' }]);
  });
});
