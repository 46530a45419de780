/*
 * The assistant picks the URLs, and pages it read can pick them for it: by default the server
 * reaches no loopback, private or link-local address, for the page asked, for any redirect hop on
 * the way, and for a public-looking name that resolves to one; nothing is paid then. With
 * CRAWLGATE_ALLOW_PRIVATE_NETWORKS (an intranet, the local demo) the same pages are read and paid.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { publicAddressFetch } from '@crawlgate/middleware/node';
import { connect, envFor, fundedKey, startPaidSite, type Connected, type PaidSite } from './support';

/** A plain server on 127.0.0.1 that counts its requests; `answer` writes its responses. */
async function startServer(answer: (path: string) => { status: number; headers: Record<string, string> }) {
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    paths.push(request.url ?? '');
    const { status, headers } = answer(request.url ?? '/');
    response.writeHead(status, headers).end(status === 200 ? 'internal: the admin password is hunter2' : '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('@crawlgate/mcp and private networks', () => {
  let site: PaidSite;
  /** What an intranet or the machine itself holds. */
  let internal: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    site = await startPaidSite();
    internal = await startServer(() => ({ status: 200, headers: { 'content-type': 'text/plain' } }));
  });
  afterAll(async () => {
    await internal.close();
    await site.close();
  });

  let mcp: Connected | undefined;
  afterEach(async () => {
    await mcp?.close();
    mcp = undefined;
  });

  /** The environment without the opt-in: what a server configured as the README says runs with. */
  const byDefault = async (): Promise<Record<string, string>> => {
    const { CRAWLGATE_ALLOW_PRIVATE_NETWORKS: _optIn, ...env } = envFor(site, await fundedKey(site));
    return env;
  };

  /** Calls `tool` on `url` and checks that it was refused as private_network, with nothing paid. */
  async function expectRefused(tool: 'fetch_page' | 'quote_price', url: string, host: string) {
    const before = (await site.transfers()).length;
    const result = await mcp!.call(tool, { url });
    expect(result.isError).toBe(true);
    expect(result.json).toEqual({
      error: {
        code: 'private_network',
        message: expect.stringContaining('public addresses only'),
        url,
        host,
      },
    });
    expect((await site.transfers()).length).toBe(before);
  }

  it('refuses a page on 127.0.0.1, or on another address that is not public, by default, and pays nothing', async () => {
    mcp = await connect(await byDefault());
    await expectRefused('fetch_page', `${site.url}/cheap/local`, '127.0.0.1');
    await expectRefused('quote_price', `${site.url}/cheap/local`, '127.0.0.1');
    await expectRefused('fetch_page', `http://localhost:${new URL(site.url).port}/cheap/local`, 'localhost');
    await expectRefused('fetch_page', `http://[::ffff:127.0.0.1]:${internal.port}/admin`, '[::ffff:7f00:1]');
    await expectRefused('fetch_page', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254');
    expect(internal.paths).toEqual([]);
    expect((await mcp.call('spending')).structured).toMatchObject({ spent_usd: '0', payments: 0, pages: [] });
  });

  it('refuses a public-looking name that resolves to a loopback address, pays nothing', async () => {
    // The server's own fetch with a resolver standing in for a DNS record that points at 127.0.0.1.
    const rebound = publicAddressFetch({ resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    mcp = await connect(await byDefault(), { fetch: rebound });
    const port = new URL(site.url).port;
    await expectRefused('fetch_page', `http://news.example:${port}/cheap/rebound`, 'news.example');
    await expectRefused('quote_price', `http://news.example:${port}/cheap/rebound`, 'news.example');
    expect((await mcp.call('spending')).structured).toMatchObject({ spent_usd: '0', payments: 0 });
  });

  it('refuses a redirect from a site it may read to a private address, and pays nothing', async () => {
    // The redirecting site stands in for a public one: loopback is allowed for it, nothing else.
    // 0.0.0.0 is no public address, though connecting to it reaches this machine.
    const redirector = await startServer((path) => ({
      status: 302,
      headers: {
        location:
          path === '/to-paid'
            ? `http://0.0.0.0:${new URL(site.url).port}/cheap/redirected`
            : `http://0.0.0.0:${internal.port}/admin`,
      },
    }));
    try {
      mcp = await connect(await byDefault(), { fetch: publicAddressFetch({ allowLoopback: true }) });
      const origin = `http://127.0.0.1:${redirector.port}`;
      await expectRefused('fetch_page', `${origin}/to-internal`, '0.0.0.0');
      await expectRefused('quote_price', `${origin}/to-internal`, '0.0.0.0');
      await expectRefused('fetch_page', `${origin}/to-paid`, '0.0.0.0');
      expect(redirector.paths).toEqual(['/to-internal', '/to-internal', '/to-paid']);
      expect(internal.paths).toEqual([]);
      expect((await mcp.call('spending')).structured).toMatchObject({ spent_usd: '0', payments: 0 });
    } finally {
      await redirector.close();
    }
  });

  it('reads and pays a page on 127.0.0.1 with CRAWLGATE_ALLOW_PRIVATE_NETWORKS=true', async () => {
    mcp = await connect({ ...(await byDefault()), CRAWLGATE_ALLOW_PRIVATE_NETWORKS: 'true' });
    const before = (await site.transfers()).length;
    const page = await mcp.call('fetch_page', { url: `${site.url}/cheap/allowed` });
    expect(page.isError).toBe(false);
    expect(page.structured).toMatchObject({
      status: 200,
      text: 'content of /cheap/allowed',
      paid: { price_usd: '0.001' },
    });
    expect((await site.transfers()).length).toBe(before + 1);
  });
});
