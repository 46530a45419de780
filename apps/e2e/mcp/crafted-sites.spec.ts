/*
 * Sites that lie to the MCP server: crafted x402 402s from a raw node:http server on loopback,
 * which records every payment header it receives. No chain is involved: the server pays USDC on
 * base by signed authorization, which the site "accepts" by answering 200. What the site received
 * is the judge of what was signed, and whom to.
 */

import { decodeBase64Json, encodeBase64Json, signAccessToken, type PaymentRequirementsV1 } from '@crawlgate/core';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { BASE_USDC, baseV1Offer } from '../agent-sdk/support/base-offers';
import { connect, type Connected } from './support';

const PAYEE_A = privateKeyToAccount(generatePrivateKey()).address;
const PAYEE_B = privateKeyToAccount(generatePrivateKey()).address;

interface Authorization {
  from: string;
  to: string;
  value: string;
}

const v1 = (overrides: Partial<PaymentRequirementsV1> = {}) => baseV1Offer(PAYEE_B, overrides);

/** A site whose every path answers `handle`; `authorizations` holds what each payment signed. */
async function startSite(handle: (request: IncomingMessage, response: ServerResponse, paid: boolean) => void) {
  const authorizations: Authorization[] = [];
  const server = createServer((request, response) => {
    const header = request.headers['x-payment'] ?? request.headers['payment-signature'];
    const payment = typeof header === 'string' ? (decodeBase64Json(header) as any) : undefined;
    if (payment?.payload?.authorization) authorizations.push(payment.payload.authorization);
    request.resume().on('end', () => handle(request, response, payment !== undefined));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type Site = Awaited<ReturnType<typeof startSite>>;

const json402 = (response: ServerResponse, body: unknown, headers: Record<string, string> = {}) =>
  response.writeHead(402, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** The server's settings: a wallet paying USDC on base, the crafted sites on 127.0.0.1 allowed. */
const env = {
  CRAWLGATE_WALLET_KEY: generatePrivateKey(),
  CRAWLGATE_MAX_PRICE_USD: '0.01',
  CRAWLGATE_BUDGET_USD: '1',
  CRAWLGATE_NETWORKS: 'base',
  CRAWLGATE_ALLOW_PRIVATE_NETWORKS: 'true',
};

describe('@crawlgate/mcp against crafted 402s', () => {
  let mcp: Connected | undefined;
  let site: Site | undefined;
  afterEach(async () => {
    await mcp?.close();
    await site?.close();
    mcp = site = undefined;
  });

  it.each([
    ['no extra', undefined],
    ['a domain of its own', { name: 'Fake', version: '9' }],
  ])(
    'quotes what fetch_page then pays, to whom it pays, when the v2 header offers a lower price with %s',
    async (_, extra) => {
      // The header's cheaper offer is one the agent drops (no domain) or refuses (not USDC's domain).
      const header = encodeBase64Json({
        x402Version: 2,
        resource: { url: 'http://site/page' },
        accepts: [
          {
            scheme: 'exact',
            network: 'eip155:8453',
            amount: '1000',
            asset: BASE_USDC,
            payTo: PAYEE_A,
            maxTimeoutSeconds: 60,
            ...(extra ? { extra } : {}),
          },
        ],
      });
      site = await startSite((_request, response, paid) =>
        paid
          ? response.writeHead(200, { 'content-type': 'text/plain' }).end('the page')
          : json402(
              response,
              { x402Version: 1, accepts: [v1({ maxAmountRequired: '10000' })] },
              { 'payment-required': header },
            ),
      );
      mcp = await connect(env);
      const quote = await mcp.call('quote_price', { url: `${site.url}/split` });
      const page = await mcp.call('fetch_page', { url: `${site.url}/split` });
      expect(page.structured).toMatchObject({ status: 200, text: 'the page' });
      expect(site.authorizations).toHaveLength(1);
      expect(quote.structured).toMatchObject({
        price_usd: page.structured!.paid.price_usd,
        pay_to: site.authorizations[0].to,
        network_allowed: true,
        within_max_price: true,
      });
      expect(site.authorizations[0]).toMatchObject({ to: PAYEE_B, value: '10000' });
    },
  );

  it('holds a payment to max_price_usd, a limit of the call below the configured one', async () => {
    site = await startSite((_request, response, paid) =>
      paid
        ? response.writeHead(200, { 'content-type': 'text/plain' }).end('the page')
        : json402(response, { x402Version: 1, accepts: [v1({ maxAmountRequired: '10000' })] }),
    );
    mcp = await connect(env);
    const url = `${site.url}/dearer`;
    expect(await mcp.call('fetch_page', { url, max_price_usd: '0.005' })).toMatchObject({
      isError: true,
      json: { error: { code: 'price_too_high', price_usd: '0.01', max_price_usd: '0.005' } },
    });
    expect(site.authorizations).toEqual([]);
    // A limit above the configured one changes nothing: the configured one holds.
    expect((await mcp.call('fetch_page', { url, max_price_usd: '2' })).structured).toMatchObject({
      paid: { price_usd: '0.01' },
    });
    const notAnAmount = await mcp.client.callTool({ name: 'fetch_page', arguments: { url, max_price_usd: 'cheap' } });
    expect(notAnAmount.isError).toBe(true);
    expect(site.authorizations).toHaveLength(1);
  });

  it('says a payment whose answer was lost may have been paid, and lists it in spending', async () => {
    site = await startSite((request, response, paid) =>
      paid ? request.socket.destroy() : json402(response, { x402Version: 1, accepts: [v1()] }),
    );
    mcp = await connect(env);
    const url = `${site.url}/drops`;
    const page = await mcp.call('fetch_page', { url });
    expect(site.authorizations).toHaveLength(1);
    expect(page).toMatchObject({
      isError: true,
      json: {
        error: {
          code: 'payment_unconfirmed',
          payment_status: 'unknown',
          url,
          price_usd: '0.001',
          pay_to: PAYEE_B,
          network: 'base',
        },
      },
    });
    expect((await mcp.call('spending')).structured).toMatchObject({
      spent_usd: '0.001',
      payments: 1,
      held_usd: '0',
      remaining_usd: '0.999',
      pages: [{ url, spent_usd: '0', payments: 0, unconfirmed_usd: '0.001', held_usd: '0' }],
    });
  });

  it('says a site that refuses each payment holds its signed authorization, and lists what it holds in spending', async () => {
    site = await startSite((_request, response, paid) =>
      json402(response, {
        x402Version: 1,
        accepts: [v1()],
        ...(paid ? { reason: 'invalid_payment', detail: 'try again' } : {}),
      }),
    );
    mcp = await connect(env);
    const url = `${site.url}/keeps`;
    expect(await mcp.call('fetch_page', { url })).toMatchObject({
      isError: true,
      json: {
        error: {
          code: 'payment_unconfirmed',
          payment_status: 'held',
          reason: 'invalid_payment',
          price_usd: '0.001',
          pay_to: PAYEE_B,
        },
      },
    });
    // Asked again ("try again"), it signs nothing more for the page while the site holds the first.
    for (let call = 0; call < 2; call++)
      expect(await mcp.call('fetch_page', { url })).toMatchObject({
        isError: true,
        json: { error: { code: 'payment_failed', reason: 'payment_held' } },
      });
    expect(site.authorizations).toHaveLength(1);
    expect((await mcp.call('spending')).structured).toMatchObject({
      spent_usd: '0',
      payments: 0,
      held_usd: '0.001',
      remaining_usd: '0.999',
      pages: [{ url, spent_usd: '0', payments: 0, unconfirmed_usd: '0', held_usd: '0.001' }],
    });
  });

  it('says a page it paid whose body broke off was paid, not refused: no call expects it free', async () => {
    // Read after the payment's bookkeeping, the failure came back as fetch_failed ("nothing is paid"),
    // and the assistant, believing it, paid the page again.
    site = await startSite((request, response, paid) => {
      if (!paid) return json402(response, { x402Version: 1, accepts: [v1()] });
      response.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
      response.write('<h1>the start');
      setTimeout(() => request.socket.destroy(), 50);
    });
    mcp = await connect(env);
    const url = `${site.url}/cut`;
    const answer = await mcp.call('fetch_page', { url });
    expect(answer.isError).toBeFalsy();
    expect(answer.structured).toMatchObject({
      status: 200,
      text: null,
      body_error: expect.stringMatching(/broke off/),
      paid: { price_usd: '0.001', amount: '1000' },
    });
    expect(site.authorizations).toHaveLength(1);
  });

  it('says a page answered after a payment whose outcome no answer told carries that payment: not "paid nothing"', async () => {
    // The 502 page came back with paid: null (which says nothing was paid) while the price counted as spent.
    site = await startSite((_request, response, paid) =>
      paid
        ? response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway')
        : json402(response, { x402Version: 1, accepts: [v1()] }),
    );
    mcp = await connect(env);
    const answer = await mcp.call('fetch_page', { url: `${site.url}/gateway` });
    expect(answer.structured).toMatchObject({
      status: 502,
      paid: null,
      payment_unconfirmed: { status: 'unknown', price_usd: '0.001', amount: '1000', pay_to: PAYEE_B },
      spent_usd: '0.001',
    });
  });

  it('says a page it paid whose read with the token it bought failed was paid, not refused (helper-437)', async () => {
    // Reported as fetch_failed ("nothing is paid then") while spending showed the payment.
    const token = (path: string) => {
      const now = Math.floor(Date.now() / 1000);
      return signAccessToken(
        { gate_id: 'gate', site_id: 'site', url: path, kid: 'k1', iat: now, exp: now + 600 },
        'the site’s secret',
      );
    };
    site = await startSite((request, response, paid) => {
      if (request.headers['x-crawlgate-token']) return void request.socket.destroy();
      if (!paid) return json402(response, { x402Version: 1, accepts: [v1()] });
      response.writeHead(502, { 'x-crawlgate-token': token('/unread') }).end('bad gateway');
    });
    mcp = await connect(env);
    const url = `${site.url}/unread`;
    const refused = await mcp.client.callTool({ name: 'fetch_page', arguments: { url } });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content as { text: string }[])[0].text)).toMatchObject({
      error: {
        code: 'paid_unread',
        url,
        price_usd: '0.001',
        amount: '1000',
        reason: 'fetch_failed',
      },
    });
    expect(site.authorizations).toHaveLength(1);
  });

  it('pays nothing for a call cancelled before the site asked (helper-437)', async () => {
    // The agent went on without the call's signal: a 402 that came after the cancel was paid.
    site = await startSite((_request, response, paid) =>
      paid
        ? response.writeHead(200, { 'content-type': 'text/plain' }).end('the page')
        : void setTimeout(() => json402(response, { x402Version: 1, accepts: [v1()] }), 1_000),
    );
    mcp = await connect(env);
    const cancel = new AbortController();
    const call = mcp.client.callTool({ name: 'fetch_page', arguments: { url: `${site.url}/slow` } }, undefined, {
      signal: cancel.signal,
    });
    setTimeout(() => cancel.abort(), 200);
    await expect(call).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(site.authorizations).toEqual([]);
    expect((await mcp.call('spending', {})).structured).toMatchObject({ spent_usd: '0' });
  });

  it("keeps a refusal short whatever the site's answer says, and lists a bounded number of offers", async () => {
    const huge = 'x'.repeat(400_000);
    const junk = Array.from({ length: 2000 }, (_, i) =>
      v1({ asset: `0x${(i + 1).toString(16).padStart(40, '0')}`, description: huge.slice(0, 100) }),
    );
    site = await startSite((request, response, paid) =>
      request.url === '/junk'
        ? json402(response, { x402Version: 1, accepts: junk })
        : json402(response, {
            x402Version: 1,
            accepts: [v1()],
            ...(paid ? { reason: huge, detail: huge } : {}),
          }),
    );
    mcp = await connect(env);
    const refused = await mcp.client.callTool({ name: 'fetch_page', arguments: { url: `${site.url}/huge` } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused).length).toBeLessThan(5_000);
    expect(mcp.logs.join('\n').length).toBeLessThan(5_000);
    const quote = await mcp.client.callTool({ name: 'quote_price', arguments: { url: `${site.url}/junk` } });
    expect(JSON.stringify(quote).length).toBeLessThan(10_000);
    expect((quote.structuredContent as { offers: unknown[] }).offers.length).toBeLessThanOrEqual(10);
  });
});

describe('@crawlgate/mcp reading a body that never ends', () => {
  it('stops reading when the client cancels the call, and lets go of the connection', async () => {
    // A page that sends its headers and a byte, then nothing: each abandoned call kept its socket open.
    const open = new Set<import('node:net').Socket>();
    const server = createServer((request, response) => {
      open.add(request.socket);
      request.socket.on('close', () => open.delete(request.socket));
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('a');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const mcp = await connect(env);
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/trickle`;
      const cancel = new AbortController();
      const call = mcp.client.callTool({ name: 'fetch_page', arguments: { url } }, undefined, {
        signal: cancel.signal,
      });
      await waitFor(() => open.size === 1);
      cancel.abort();
      await expect(call).rejects.toThrow();
      await waitFor(() => open.size === 0, 1000);
      expect(open.size).toBe(0);
    } finally {
      await mcp.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** Resolves once `done()` holds, polling; fails after `ms`. */
async function waitFor(done: () => boolean, ms = 5000): Promise<void> {
  for (const started = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 20)))
    if (Date.now() - started > ms) throw new Error('timed out waiting');
}
