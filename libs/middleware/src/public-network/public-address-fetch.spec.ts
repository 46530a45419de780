import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrivateAddressError, publicAddressFetch } from './public-address-fetch';
import { resolvingTo } from './resolver.test-data';

/** A real server on loopback that counts its connections; `handle` answers. */
async function startServer(
  handle: (request: IncomingMessage, body: string) => [number, Record<string, string>, string],
) {
  let connections = 0;
  const server: Server = createServer((request, response) => {
    if (request.url === '/slow') return; // never answers
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const [status, headers, text] = handle(request, body);
      response.writeHead(status, headers).end(text);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('publicAddressFetch', () => {
  let site: Awaited<ReturnType<typeof startServer>>;
  /** What the network behind the host would hold: it must never be reached. */
  let internal: Awaited<ReturnType<typeof startServer>>;

  beforeAll(async () => {
    internal = await startServer(() => [200, { 'content-type': 'text/plain' }, 'internal secret']);
    site = await startServer((request, body) => {
      const to = new URL(request.url ?? '/', 'http://x').searchParams.get('to');
      if (to !== null) return [302, { location: to }, ''];
      return [
        200,
        { 'content-type': 'application/json', 'x-seen-host': request.headers.host ?? '' },
        JSON.stringify({ method: request.method, body, accept: request.headers.accept ?? null }),
      ];
    });
  });
  afterAll(async () => {
    await site.close();
    await internal.close();
  });

  it('never connects to a name that resolves to a loopback address', async () => {
    const dns = resolvingTo('127.0.0.1');
    const before = site.connections();
    const failure = await publicAddressFetch({ resolve: dns.resolve })(`http://agent.test:${site.port}/`).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(PrivateAddressError);
    expect(failure).toMatchObject({ host: 'agent.test', message: 'agent.test resolves to a loopback address' });
    expect(dns.asked).toEqual(['agent.test']);
    expect(site.connections()).toBe(before);
  });

  it.each([
    ['a private address', ['10.1.2.3']],
    ['a link-local (cloud metadata) address', ['169.254.169.254']],
    ['a CGNAT address', ['100.64.0.1']],
    ['the unspecified address', ['0.0.0.0']],
    ['an IPv4-mapped private address', ['::ffff:192.168.1.10']],
    ['an IPv6 unique local address', ['fd00::1']],
    ['a public and a private address at once', ['93.184.216.34', '10.0.0.7']],
    ['an IPv4-mapped loopback address written out in full', ['0:0:0:0:0:ffff:7f00:1']],
    ['the IPv6 loopback address written out in full', ['0:0:0:0:0:0:0:1']],
    ['a link-local address with a zone', ['fe80::1%eth0']],
  ])('refuses a name that resolves to %s', async (_case, addresses) => {
    const failure = await publicAddressFetch({ resolve: resolvingTo(...addresses).resolve })(
      'https://agent.test/',
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PrivateAddressError);
    expect((failure as Error).message).toMatch(/^agent\.test resolves to /);
  });

  it('fails as fetch does for a name without an address', async () => {
    const failure = await publicAddressFetch({ resolve: resolvingTo().resolve })('https://agent.test/').catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure).toMatchObject({ message: 'fetch failed', cause: { code: 'ENOTFOUND' } });
  });

  it('checks an IP literal it is asked for itself (Node does not look one up)', async () => {
    const before = site.connections();
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '0.0.0.0', '2130706433', '127.1']) {
      const failure = await publicAddressFetch()(`http://${host}:${site.port}/`).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PrivateAddressError);
    }
    expect(site.connections()).toBe(before);
  });

  it('refuses localhost by its name, whatever a name server answers for it', async () => {
    const dns = resolvingTo('93.184.216.34');
    for (const host of ['localhost', 'LocalHost.', 'admin.localhost']) {
      const failure = await publicAddressFetch({ resolve: dns.resolve })(`http://${host}:${site.port}/`).catch(
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ name: 'PrivateAddressError', reason: 'is a loopback name' });
    }
    expect(dns.asked).toEqual([]);
  });

  it('reaches loopback only when allowed, and a private address even then never', async () => {
    const allowed = await publicAddressFetch({ allowLoopback: true })(`http://127.0.0.1:${site.port}/`);
    expect(allowed.status).toBe(200);
    await allowed.body?.cancel();
    await expect(publicAddressFetch({ allowLoopback: true })(`http://0.0.0.0:${site.port}/`)).rejects.toThrow(
      PrivateAddressError,
    );
  });

  it('reaches the address it checked and hands back status, headers, body and URL', async () => {
    const dns = resolvingTo('127.0.0.1');
    const url = `http://agent.test:${site.port}/page`;
    const response = await publicAddressFetch({ resolve: dns.resolve, allowLoopback: true })(url, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(response.url).toBe(url);
    expect(response.headers.get('x-seen-host')).toBe(`agent.test:${site.port}`);
    expect(await response.json()).toEqual({ method: 'GET', body: '', accept: 'application/json' });
    expect(dns.asked).toEqual(['agent.test']);
  });

  it('sends a method and a body', async () => {
    const response = await publicAddressFetch({ allowLoopback: true })(`http://127.0.0.1:${site.port}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"payment":1}',
    });
    expect(await response.json()).toMatchObject({ method: 'POST', body: '{"payment":1}' });
  });

  it.each([
    ['a loopback-looking IPv4-mapped address', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ['the unspecified address (which reaches this host)', (port: number) => `http://0.0.0.0:${port}/`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a private address', (port: number) => `http://10.0.0.1:${port}/`],
  ])('does not follow a redirect to %s', async (_case, target) => {
    const before = internal.connections();
    const to = encodeURIComponent(target(internal.port));
    const failure = await publicAddressFetch({ allowLoopback: true })(`http://127.0.0.1:${site.port}/?to=${to}`).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(PrivateAddressError);
    expect(internal.connections()).toBe(before);
  });

  it('does not follow a redirect to a name that resolves to a private address', async () => {
    const dns = resolvingTo('127.0.0.1');
    const fetchPublic = publicAddressFetch({
      allowLoopback: true,
      resolve: async (hostname) =>
        hostname === 'metadata.test' ? [{ address: '169.254.169.254', family: 4 }] : dns.resolve(hostname),
    });
    const to = encodeURIComponent('http://metadata.test/latest/meta-data/');
    await expect(fetchPublic(`http://site.test:${site.port}/?to=${to}`)).rejects.toThrow(
      'metadata.test resolves to a private, link-local or reserved address',
    );
  });

  it('follows a redirect to an allowed address, and hands one back as it came with redirect: "manual"', async () => {
    const to = encodeURIComponent(`http://127.0.0.1:${internal.port}/public`);
    const followed = await publicAddressFetch({ allowLoopback: true })(`http://127.0.0.1:${site.port}/?to=${to}`);
    expect([followed.status, followed.redirected, followed.url]).toEqual([
      200,
      true,
      `http://127.0.0.1:${internal.port}/public`,
    ]);
    expect(await followed.text()).toBe('internal secret');
    const manual = await publicAddressFetch({ allowLoopback: true })(`http://127.0.0.1:${site.port}/?to=${to}`, {
      redirect: 'manual',
    });
    expect([manual.status, manual.headers.get('location')]).toEqual([302, `http://127.0.0.1:${internal.port}/public`]);
  });

  it('gives up when its signal aborts', async () => {
    await expect(
      publicAddressFetch({ allowLoopback: true })(`http://127.0.0.1:${site.port}/slow`, {
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('gives up on a connection silent for its idle timeout, as fetch does after 300 s', async () => {
    await expect(
      publicAddressFetch({ allowLoopback: true, idleTimeoutMs: 200 })(`http://127.0.0.1:${site.port}/slow`),
    ).rejects.toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'ETIMEDOUT' } });
  });

  it('refuses schemes other than http and https', async () => {
    await expect(publicAddressFetch()('file:///etc/passwd')).rejects.toThrow(/not an http/);
  });
});
