import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { nodeKeyDirectoryFetch } from './node-directory-fetch';

describe('nodeKeyDirectoryFetch', () => {
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/slow') return; // never answers
      response.writeHead(200, { 'content-type': 'application/json', 'x-seen-host': request.headers.host ?? '' });
      response.end(JSON.stringify({ keys: [], accept: request.headers.accept }));
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A resolver that answers `addresses` for every name, as a public DNS record pointing anywhere would. */
  const resolvingTo = (...addresses: string[]) => {
    const asked: string[] = [];
    const resolve = async (hostname: string): Promise<LookupAddress[]> => {
      asked.push(hostname);
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { resolve, asked };
  };

  it('never connects to a name that resolves to a loopback address', async () => {
    const dns = resolvingTo('127.0.0.1');
    const before = connections;
    await expect(nodeKeyDirectoryFetch({ resolve: dns.resolve })(`http://agent.test:${port}/`)).rejects.toThrow();
    expect(dns.asked).toEqual(['agent.test']);
    expect(connections).toBe(before);
  });

  it.each([
    ['a private address', ['10.1.2.3']],
    ['a link-local (cloud metadata) address', ['169.254.169.254']],
    ['an IPv4-mapped private address', ['::ffff:192.168.1.10']],
    ['an IPv6 unique local address', ['fd00::1']],
    ['a public and a private address at once', ['93.184.216.34', '10.0.0.7']],
    ['no address', []],
    ['an IPv4-mapped loopback address written out in full', ['0:0:0:0:0:ffff:7f00:1']],
    ['the IPv6 loopback address written out in full', ['0:0:0:0:0:0:0:1']],
    ['a link-local address with a zone', ['fe80::1%eth0']],
  ])('refuses a name that resolves to %s', async (_case, addresses) => {
    const dns = resolvingTo(...addresses);
    const failure = await nodeKeyDirectoryFetch({ resolve: dns.resolve })('https://agent.test/').catch(
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/agent\.test (resolves to|has no address)/);
  });

  it('reaches the address it checked and hands back status, headers and body', async () => {
    const dns = resolvingTo('127.0.0.1');
    const response = await nodeKeyDirectoryFetch({ resolve: dns.resolve, allowLoopback: true })(
      `http://agent.test:${port}/.well-known/http-message-signatures-directory`,
      { headers: { accept: 'application/json' }, redirect: 'manual' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-seen-host')).toBe(`agent.test:${port}`);
    expect(await response.json()).toEqual({ keys: [], accept: 'application/json' });
    expect(dns.asked).toEqual(['agent.test']);
  });

  it('gives up when its signal aborts', async () => {
    const dns = resolvingTo('127.0.0.1');
    const started = Date.now();
    await expect(
      nodeKeyDirectoryFetch({ resolve: dns.resolve, allowLoopback: true })(`http://agent.test:${port}/slow`, {
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow(/abort/i);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('checks an IP literal it is asked for itself (Node does not look one up)', async () => {
    const before = connections;
    await expect(nodeKeyDirectoryFetch()(`http://127.0.0.1:${port}/`)).rejects.toThrow(/loopback/);
    await expect(nodeKeyDirectoryFetch()(`http://[::ffff:127.0.0.1]:${port}/`)).rejects.toThrow(/refused|private/);
    expect(connections).toBe(before);
    const allowed = await nodeKeyDirectoryFetch({ allowLoopback: true })(`http://127.0.0.1:${port}/`);
    expect(allowed.status).toBe(200);
    await allowed.body?.cancel();
  });

  it('refuses schemes other than http and https', async () => {
    await expect(nodeKeyDirectoryFetch()('file:///etc/passwd')).rejects.toThrow(/not an http/);
  });
});
