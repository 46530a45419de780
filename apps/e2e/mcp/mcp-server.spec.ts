/*
 * The server as an MCP host uses it: a real MCP client lists and calls its tools while the
 * server's agent pays a real Express site gated by our middleware, through the real API, on the
 * local chain. What the chain records (USDC Transfer events to the site's pay_to) is the judge of
 * what was paid.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, envFor, fundedKey, startPaidSite, type Connected, type PaidSite } from './support';

describe('@crawlgate/mcp over a real MCP client', () => {
  let site: PaidSite;
  beforeAll(async () => {
    site = await startPaidSite();
  });
  afterAll(() => site.close());

  let mcp: Connected | undefined;
  afterEach(async () => {
    await mcp?.close();
    mcp = undefined;
  });

  it('lists its three tools, each with an input schema', async () => {
    mcp = await connect(envFor(site, await fundedKey(site, '0')));
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['fetch_page', 'quote_price', 'spending']);
    const fetchPage = tools.find((tool) => tool.name === 'fetch_page')!;
    expect(fetchPage.inputSchema).toMatchObject({
      type: 'object',
      required: ['url'],
      properties: { url: expect.any(Object), max_chars: expect.any(Object) },
    });
    expect(fetchPage.description).toMatch(/pay/i);
    expect(tools.every((tool) => tool.outputSchema?.type === 'object')).toBe(true);
  });

  it('quotes a page without paying, pays for it once, reads it again on its token, refuses one above the max price, and reports the spend', async () => {
    mcp = await connect(envFor(site, await fundedKey(site), { max: '0.005', budget: '1' }));
    const page = `${site.url}/cheap/story`;
    const before = (await site.transfers()).length;

    const quote = await mcp.call('quote_price', { url: page });
    expect(quote.isError).toBe(false);
    expect(quote.structured).toMatchObject({
      url: page,
      source: 'page',
      free: false,
      price_usd: '0.001',
      within_max_price: true,
      within_budget: true,
      network_allowed: true,
      offers: expect.arrayContaining([
        expect.objectContaining({
          network: 'local',
          asset: site.gated.app.chain.usdc,
          pay_to: site.gated.payTo,
          amount: '1000',
          price_usd: '0.001',
        }),
      ]),
    });
    expect(quote.json).toEqual(quote.structured);
    expect((await site.transfers()).length).toBe(before);

    const first = await mcp.call('fetch_page', { url: page });
    expect(first.isError).toBe(false);
    expect(first.structured).toMatchObject({
      url: page,
      status: 200,
      content_type: expect.stringContaining('text/html'),
      text: 'content of /cheap/story',
      truncated: false,
      paid: {
        price_usd: '0.001',
        amount: '1000',
        network: 'eip155:31337',
        mode: 'authorization',
        tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
      spent_usd: '0.001',
      remaining_usd: '0.999',
    });
    const afterFirst = await site.transfers();
    expect(afterFirst.length).toBe(before + 1);
    expect(afterFirst.at(-1)).toMatchObject({
      value: 1000n,
      hash: first.structured!.paid.tx_hash,
      from: mcp.session.address,
    });

    const again = await mcp.call('fetch_page', { url: page });
    expect(again.structured).toMatchObject({
      status: 200,
      text: 'content of /cheap/story',
      paid: null,
      spent_usd: '0.001',
    });
    expect((await site.transfers()).length).toBe(before + 1);

    const pricey = await mcp.call('fetch_page', { url: `${site.url}/article/pricey` });
    expect(pricey.isError).toBe(true);
    expect(pricey.json).toEqual({
      error: {
        code: 'price_too_high',
        message: expect.stringContaining('0.01'),
        url: `${site.url}/article/pricey`,
        price_usd: '0.01',
        max_price_usd: '0.005',
      },
    });
    expect((await site.transfers()).length).toBe(before + 1);

    const spending = await mcp.call('spending');
    expect(spending.structured).toEqual({
      wallet: mcp.session.address,
      spent_usd: '0.001',
      payments: 1,
      budget_usd: '1',
      held_usd: '0',
      remaining_usd: '0.999',
      max_price_usd: '0.005',
      pages: [
        {
          url: page,
          spent_usd: '0.001',
          payments: 1,
          unconfirmed_usd: '0',
          held_usd: '0',
          last_paid_at: expect.any(String),
          last_tx_hash: first.structured!.paid.tx_hash,
        },
      ],
      pages_total: 1,
    });
    expect(mcp.logs.join('\n')).toContain(`paid 0.001 USD for ${page}`);
  });

  it('says what quote_price would not pay for, and that a free page is free', async () => {
    mcp = await connect(envFor(site, await fundedKey(site, '0'), { max: '0.005', budget: '0.0005' }));
    expect((await mcp.call('quote_price', { url: `${site.url}/article/dear` })).structured).toMatchObject({
      price_usd: '0.01',
      within_max_price: false,
      within_budget: false,
      network_allowed: true,
    });
    expect((await mcp.call('quote_price', { url: `${site.url}/free/post` })).structured).toMatchObject({
      source: 'page',
      free: true,
      price_usd: '0',
      offers: [],
    });
  });

  it("quotes from the site's /.well-known/pay.json without asking the page", async () => {
    mcp = await connect(envFor(site, await fundedKey(site, '0')));
    const gatesBefore = await site.gated.gateCount();
    const quote = await mcp.call('quote_price', { url: `${site.url}/cheap/listed?x=1`, source: 'pay.json' });
    expect(quote.structured).toMatchObject({
      source: 'pay.json',
      free: false,
      price_usd: '0.001',
      offers: [
        {
          network: 'local',
          asset: site.gated.app.chain.usdc,
          pay_to: site.gated.payTo,
          amount: '1000',
          price_usd: '0.001',
          x402_version: null,
        },
      ],
    });
    expect(
      (await mcp.call('quote_price', { url: `${site.url}/robots.txt`, source: 'pay.json' })).structured,
    ).toMatchObject({ free: true, price_usd: '0' });
    expect(
      (await mcp.call('quote_price', { url: `${site.url}/anything/else`, source: 'pay.json' })).structured,
    ).toMatchObject({ price_usd: '0.01' });
    // No page was asked, so no gate was offered (the publisher's conversion stats are untouched).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await site.gated.gateCount()).toBe(gatesBefore);
  });

  it('refuses a payment over the budget left, as a structured error', async () => {
    mcp = await connect(envFor(site, await fundedKey(site), { budget: '0.0015' }));
    expect((await mcp.call('fetch_page', { url: `${site.url}/cheap/one` })).structured).toMatchObject({
      status: 200,
      paid: { price_usd: '0.001' },
    });
    const before = (await site.transfers()).length;
    const refused = await mcp.call('fetch_page', { url: `${site.url}/cheap/two` });
    expect(refused).toMatchObject({
      isError: true,
      json: { error: { code: 'budget_exceeded', price_usd: '0.001', remaining_usd: '0.0005' } },
    });
    expect((await site.transfers()).length).toBe(before);
  });

  it('keeps its budget in CRAWLGATE_BUDGET_FILE: started again, or run twice on one file, it cannot pay past it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-budget-'));
    const env = {
      ...envFor(site, await fundedKey(site), { budget: '0.0025' }),
      CRAWLGATE_BUDGET_FILE: join(dir, 'budget.json'),
    };
    try {
      mcp = await connect(env);
      expect((await mcp.call('fetch_page', { url: `${site.url}/cheap/one` })).structured).toMatchObject({
        status: 200,
      });
      await mcp.close();
      // A restart: the server starts with what was spent before, and says so.
      mcp = await connect(env);
      expect((await mcp.call('spending')).json).toMatchObject({ spent_usd: '0.001', remaining_usd: '0.0015' });
      // A second server on the same file at the same time: the two share what is left.
      const second = await connect(env);
      try {
        expect((await second.call('fetch_page', { url: `${site.url}/cheap/two` })).structured).toMatchObject({
          status: 200,
        });
        // What the other server spent shows in this one's spending and quotes, not only in its refusals.
        expect((await mcp.call('spending')).json).toMatchObject({ spent_usd: '0.002', remaining_usd: '0.0005' });
        expect((await mcp.call('quote_price', { url: `${site.url}/cheap/three` })).json).toMatchObject({
          within_budget: false,
          remaining_usd: '0.0005',
        });
        const before = (await site.transfers()).length;
        const refused = await mcp.call('fetch_page', { url: `${site.url}/cheap/three` });
        expect(refused).toMatchObject({
          isError: true,
          json: { error: { code: 'budget_exceeded', price_usd: '0.001', remaining_usd: '0.0005' } },
        });
        expect((await site.transfers()).length).toBe(before);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to pay on a network it was not allowed, as a structured error', async () => {
    mcp = await connect(envFor(site, await fundedKey(site), { networks: 'base,base-sepolia' }));
    const refused = await mcp.call('fetch_page', { url: `${site.url}/cheap/elsewhere` });
    expect(refused).toMatchObject({
      isError: true,
      json: {
        error: {
          code: 'network_not_allowed',
          refused: expect.arrayContaining([
            expect.objectContaining({ network: 'local', reason: 'network_not_allowed' }),
          ]),
        },
      },
    });
    expect((await mcp.call('quote_price', { url: `${site.url}/cheap/elsewhere` })).structured).toMatchObject({
      network_allowed: false,
    });
  });

  it('reports a payment the site refused, whose signed authorization it holds, as payment_unconfirmed with its reason: nothing spent, its price held', async () => {
    mcp = await connect(envFor(site, await fundedKey(site, '0')));
    const url = `${site.url}/cheap/broke`;
    const refused = await mcp.call('fetch_page', { url });
    expect(refused).toMatchObject({
      isError: true,
      json: {
        error: {
          code: 'payment_unconfirmed',
          payment_status: 'held',
          reason: 'insufficient_funds',
          price_usd: '0.001',
          pay_to: site.gated.payTo,
        },
      },
    });
    expect((await mcp.call('spending')).structured).toMatchObject({
      spent_usd: '0',
      payments: 0,
      held_usd: '0.001',
      remaining_usd: '0.999',
      pages: [{ url, spent_usd: '0', held_usd: '0.001' }],
    });
  });

  it('truncates text to max_chars, and never above the configured bound', async () => {
    mcp = await connect({ ...envFor(site, await fundedKey(site, '0')), CRAWLGATE_MAX_CHARS: '20' });
    const page = `${site.url}/free/long-page`;
    expect((await mcp.call('fetch_page', { url: page, max_chars: 7 })).structured).toMatchObject({
      text: 'content',
      truncated: true,
      paid: null,
    });
    expect((await mcp.call('fetch_page', { url: page })).structured).toMatchObject({
      text: 'content of /free/lon',
      truncated: true,
    });
    expect((await mcp.call('fetch_page', { url: page, max_chars: 1000 })).structured).toMatchObject({
      text: 'content of /free/lon',
      truncated: true,
    });
    expect((await mcp.call('fetch_page', { url: `${site.url}/free/a` })).structured).toMatchObject({
      text: 'content of /free/a',
      truncated: false,
    });
  });

  it('answers bad input and unreachable sites with structured errors, never a crash', async () => {
    mcp = await connect(envFor(site, await fundedKey(site, '0')));
    expect((await mcp.call('fetch_page', { url: 'file:///etc/passwd' })).json).toMatchObject({
      error: { code: 'invalid_url' },
    });
    expect((await mcp.call('quote_price', { url: 'not a url' })).json).toMatchObject({
      error: { code: 'invalid_url' },
    });
    const closed = `http://127.0.0.1:${await closedPort()}/x`;
    expect((await mcp.call('fetch_page', { url: closed })).json).toMatchObject({
      error: { code: 'fetch_failed', url: closed },
    });
    expect((await mcp.call('quote_price', { url: closed })).json).toMatchObject({ error: { code: 'fetch_failed' } });
    expect((await mcp.call('spending')).isError).toBe(false);
  });
});

async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
