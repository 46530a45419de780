import { crawlgateExpress } from '@crawlgate/middleware/express';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PaymentEvent } from '../../../libs/agent-sdk/src';
import { GPTBOT, startGatedSite, type GatedSite } from '../middleware/support/gated-site';
import { switchOnBatchSettlement } from '../middleware/support/voucher-site';
import { fundedAgent } from './support/funded-agent';

/*
 * A publisher's own route may answer 402 after the gate took the voucher (a paywall of its own):
 * the middleware sends the gate's PAYMENT-RESPONSE, success true, on that 402. The agent took any
 * 402 for a refusal, so it forgot the charged total: every later voucher of the channel signed
 * that total again, the gate's corrective 402 naming it was refused as a lie, and the channel, its
 * refund included, stayed stuck until a timed withdrawal (helper-353's medium finding).
 */
describe('a route answering 402 after the gate charged its voucher', () => {
  const asBot = { headers: { 'user-agent': GPTBOT } };
  let gated: GatedSite;
  let server: Server;
  let siteUrl: string;
  const requestsFor = new Map<string, number>();
  beforeAll(async () => {
    gated = await startGatedSite();
    await switchOnBatchSettlement(gated);
    const app = express();
    app.use((req, _res, next) => {
      requestsFor.set(req.path, (requestsFor.get(req.path) ?? 0) + 1);
      next();
    });
    app.use(crawlgateExpress(gated.options()));
    app.get('/members/:id', (_req, res) => void res.status(402).send('subscribers only'));
    app.get('/{*path}', (req, res) => void res.send(`content of ${req.path}`));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    siteUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await gated?.close();
  }, 60_000);

  const paymentsFor = async (path: string) =>
    (await gated.app.database.prisma.payment.findMany({ where: { url: path } })).map((row) => ({
      method: row.method,
      amount: String(row.amount),
    }));

  it('counts the voucher charged: the page is not paid again, and the channel pays the next pages and refunds', async () => {
    const events: PaymentEvent[] = [];
    const { agent } = await fundedAgent(gated.app, {
      budgetUsd: '1',
      batchSettlement: { depositUsd: '1' },
      onPayment: (event) => events.push(event),
    });
    expect((await agent.fetch(`${siteUrl}/articles/1`, asBot)).status).toBe(200);

    const members = await agent.fetch(`${siteUrl}/members/1`, asBot);
    expect([members.status, await members.text()]).toEqual([402, 'subscribers only']); // the route's own answer
    expect(await paymentsFor('/members/1')).toEqual([{ method: 'voucher', amount: '10000' }]);
    expect(events.map((event) => new URL(event.url).pathname)).toEqual(['/articles/1', '/members/1']);
    const charged = () => agent.channels()[0].charged;
    expect(charged()).toBe(20_000n);

    // More of the members' area: each page bought, none held in doubt, so the site's other pages
    // are still paid after more than 20 of them (helper-356: too_many_in_doubt for 15 to 35 minutes).
    for (let n = 2; n <= 21; n++) expect((await agent.fetch(`${siteUrl}/members/${n}`, asBot)).status).toBe(402);
    expect(charged()).toBe(220_000n);
    for (const page of ['/articles/2', '/articles/3'])
      expect((await agent.fetch(`${siteUrl}${page}`, asBot)).status).toBe(200);
    expect(charged()).toBe(240_000n);
    // The page again: nothing more is charged (its token, or its voucher sent again, which the gate
    // answers for its gate). The route's 402 to the voucher, with a token of its gate, is the page:
    // two requests, not five (the token's 402 taken for a refusal, asked of verify_url, then the
    // token and the voucher again; helper-357's low).
    requestsFor.delete('/members/1');
    const again = await agent.fetch(`${siteUrl}/members/1`, asBot);
    expect([again.status, await again.text()]).toEqual([402, 'subscribers only']);
    expect(requestsFor.get('/members/1')).toBe(2);
    expect(await paymentsFor('/members/1')).toHaveLength(1);
    expect(charged()).toBe(240_000n);

    // The refund asks back the deposit's rest: the site was paid the pages it charged.
    expect(await agent.refund(`${siteUrl}/articles/9`)).toMatchObject({ amount: String(1_000_000n - 240_000n) });
  }, 90_000);
});
