import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrivateAddressError } from '../public-network/public-address-fetch';
import { KEY_DIRECTORY_USER_AGENT, nodeKeyDirectoryFetch } from './node-directory-fetch';
import { resolvingTo } from '../public-network/resolver.test-data';

/*
 * The key directory's fetch is publicAddressFetch (its spec checks addresses, names and redirects
 * in full): these check what the directory adds, and that it goes through the check.
 */
describe('nodeKeyDirectoryFetch', () => {
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/moved') {
        response.writeHead(302, { location: '/' }).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json', 'x-seen-host': request.headers.host ?? '' });
      response.end(
        JSON.stringify({
          keys: [],
          accept: request.headers.accept,
          method: request.method,
          userAgent: request.headers['user-agent'],
        }),
      );
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('never connects to a name that resolves to a loopback or private address', async () => {
    const before = connections;
    for (const address of ['127.0.0.1', '10.1.2.3', '169.254.169.254']) {
      const dns = resolvingTo(address);
      await expect(nodeKeyDirectoryFetch({ resolve: dns.resolve })(`http://agent.test:${port}/`)).rejects.toThrow(
        PrivateAddressError,
      );
      expect(dns.asked).toEqual(['agent.test']);
    }
    expect(connections).toBe(before);
  });

  it('reaches the address it checked with a GET that says who asks, and hands back status, headers and body', async () => {
    const dns = resolvingTo('127.0.0.1');
    const response = await nodeKeyDirectoryFetch({ resolve: dns.resolve, allowLoopback: true })(
      `http://agent.test:${port}/.well-known/http-message-signatures-directory`,
      { headers: { accept: 'application/json' }, redirect: 'manual' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-seen-host')).toBe(`agent.test:${port}`);
    expect(await response.json()).toEqual({
      keys: [],
      accept: 'application/json',
      method: 'GET',
      userAgent: KEY_DIRECTORY_USER_AGENT,
    });
    expect(dns.asked).toEqual(['agent.test']);
  });

  it('follows no redirect', async () => {
    const response = await nodeKeyDirectoryFetch({ allowLoopback: true })(`http://127.0.0.1:${port}/moved`);
    expect(response.status).toBe(302);
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
});
