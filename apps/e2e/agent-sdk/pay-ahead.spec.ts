import { decodeBase64Json, encodeBase64Json } from '@crawlgate/core';
import { type AgentOptions, type PaymentEvent } from '../../../libs/agent-sdk/src';
import { GPTBOT } from '../middleware/support/gated-site';
import { depositsOf } from '../middleware/support/voucher-site';
import { startDroppingProxy } from './support/dropping-proxy';
import { fundedAgent } from './support/funded-agent';
import { startLoggedSite, type LoggedSite } from './support/logged-site';

/*
 * batchSettlement.payAhead: once an origin's channel has paid a page by voucher, the agent sends
 * each new page's voucher with its first request (x402 v2, naming no gate; the middleware pays it
 * with a gate minted for that path), saving the 402's round trip. Tried as the money path is:
 * other prices, free pages, a short deposit, a lost answer, the header replayed on other pages, a
 * site that stopped taking vouchers.
 */
const PRICE = 10_000n; // the site's default, 0.01 USD
const CHEAP = 1_000n; // /cheap/*
const asBot = { headers: { 'user-agent': GPTBOT } };

describe('batchSettlement.payAhead', () => {
  let site: LoggedSite;
  beforeAll(async () => {
    site = await startLoggedSite();
  }, 60_000);
  afterAll(() => site?.close());

  async function voucherAgent(options: Partial<AgentOptions> = {}, depositUsd = '0.2') {
    const events: PaymentEvent[] = [];
    const { agent, wallet } = await fundedAgent(site.gated.app, {
      budgetUsd: '0.5',
      batchSettlement: { depositUsd, payAhead: true },
      onPayment: (event) => events.push(event),
      ...options,
    });
    const get = async (path: string, origin = site.url) => {
      const response = await agent.fetch(`${origin}${path}`, asBot);
      return { status: response.status, text: await response.text() };
    };
    return { agent, wallet, events, get };
  }
  const paymentsOf = (channelId: string) =>
    site.gated.app.database.prisma.payment.findMany({
      where: { channelId },
      orderBy: { cumulativeAmount: 'asc' },
      select: { url: true, amount: true, cumulativeAmount: true },
    });
  const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;

  it('is off unless asked for: every new page is a 402 first, then its voucher', async () => {
    const { get } = await voucherAgent({ batchSettlement: { depositUsd: '0.2' } });
    const paths = [1, 2, 3].map((i) => `/articles/${unique(`off${i}`)}`);
    for (const path of paths) expect(await get(path)).toEqual({ status: 200, text: `content of ${path}` });
    expect(paths.map((path) => site.of(path).map((request) => request.payment !== undefined))).toEqual([
      [false, true],
      [false, true],
      [false, true],
    ]);
  });

  it("sends each page's voucher with its first request once the channel paid a page: one request a page, each charged once at its price, one deposit", async () => {
    const { agent, get, events } = await voucherAgent();
    const paths = [1, 2, 3, 4, 5].map((i) => `/articles/${unique(`ahead${i}`)}`);
    for (const path of paths) expect(await get(path)).toEqual({ status: 200, text: `content of ${path}` });
    expect(paths.map((path) => site.of(path).map((request) => request.payment !== undefined))).toEqual([
      [false, true],
      [true],
      [true],
      [true],
      [true],
    ]);
    const [channel] = agent.channels();
    expect(channel).toMatchObject({ charged: 5n * PRICE, deposited: 200_000n });
    expect(await paymentsOf(channel.channelId)).toEqual(
      paths.map((url, i) => ({ url, amount: PRICE, cumulativeAmount: BigInt(i + 1) * PRICE })),
    );
    expect(events.map((event) => [event.url, event.mode, event.priceUsd])).toEqual(
      paths.map((path) => [`${site.url}${path}`, 'voucher', '0.01']),
    );
    expect(await depositsOf(site.gated, channel.channelId)).toHaveLength(1);
    // A page paid ahead, read again: its token, no payment.
    expect(await get(paths[2])).toEqual({ status: 200, text: `content of ${paths[2]}` });
    expect(site.of(paths[2]).at(-1)).toMatchObject({ payment: undefined, token: expect.any(String) });
  });

  it('pays pages fetched at once one voucher after another, each once: every total once, one request a page; one page fetched five times at once is paid once', async () => {
    const { agent, get } = await voucherAgent();
    const first = `/articles/${unique('first')}`;
    expect((await get(first)).status).toBe(200);
    const paths = Array.from({ length: 8 }, (_, i) => `/articles/${unique(`together${i}`)}`);
    const answers = await Promise.all(paths.map((path) => get(path)));
    expect(answers).toEqual(paths.map((path) => ({ status: 200, text: `content of ${path}` })));
    expect(paths.map((path) => site.of(path).length)).toEqual(paths.map(() => 1));
    const same = `/articles/${unique('same')}`;
    const sameAnswers = await Promise.all(Array.from({ length: 5 }, () => get(same)));
    expect(sameAnswers).toEqual(Array(5).fill({ status: 200, text: `content of ${same}` }));
    expect(site.of(same).filter((request) => request.payment !== undefined)).toHaveLength(1);
    const [channel] = agent.channels();
    const rows = await paymentsOf(channel.channelId);
    expect(rows.map((row) => row.cumulativeAmount)).toEqual(
      Array.from({ length: 10 }, (_, i) => BigInt(i + 1) * PRICE),
    );
    expect(new Set(rows.map((row) => row.url))).toEqual(new Set([first, ...paths, same]));
    expect(channel.charged).toBe(10n * PRICE);
  });

  it("pays a page priced otherwise at its own price: the voucher sent ahead meets the site's correction, and the next one pays", async () => {
    const { agent, get, events } = await voucherAgent();
    const [first, cheap, dear] = [`/articles/${unique('a')}`, `/cheap/${unique('b')}`, `/articles/${unique('c')}`];
    for (const path of [first, cheap, dear]) expect((await get(path)).status).toBe(200);
    // Ahead at the last price seen (0.01, then 0.001), corrected, then the page's own.
    expect([cheap, dear].map((path) => site.of(path).map((request) => request.payment !== undefined))).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(events.map((event) => event.priceUsd)).toEqual(['0.01', '0.001', '0.01']);
    const [channel] = agent.channels();
    expect((await paymentsOf(channel.channelId)).map((row) => [row.url, row.amount])).toEqual([
      [first, PRICE],
      [cheap, CHEAP],
      [dear, PRICE],
    ]);
    expect(channel.charged).toBe(2n * PRICE + CHEAP);
  });

  it('a free page is served with the voucher sent ahead not charged; the next page is asked for first and pays that same total', async () => {
    const { agent, get } = await voucherAgent();
    const [first, free, next, after] = [
      `/articles/${unique('a')}`,
      `/free/${unique('f')}`,
      `/articles/${unique('n')}`,
      `/articles/${unique('m')}`,
    ];
    for (const path of [first, free, next, after])
      expect(await get(path)).toEqual({ status: 200, text: `content of ${path}` });
    // The free page's voucher went unanswered: the channel pays nothing more ahead until a page says what it charged.
    expect([free, next, after].map((path) => site.of(path).map((request) => request.payment !== undefined))).toEqual([
      [true],
      [false, true],
      [true],
    ]);
    const [channel] = agent.channels();
    expect((await paymentsOf(channel.channelId)).map((row) => [row.url, row.cumulativeAmount])).toEqual([
      [first, PRICE],
      [next, 2n * PRICE],
      [after, 3n * PRICE],
    ]);
    expect(channel.charged).toBe(3n * PRICE);
  });

  it('a page the deposit no longer covers is asked for first, and deposits', async () => {
    const { agent, get } = await voucherAgent({}, '0.03');
    const paths = [1, 2, 3, 4, 5].map((i) => `/articles/${unique(`short${i}`)}`);
    for (const path of paths) expect((await get(path)).status).toBe(200);
    expect(paths.map((path) => site.of(path).length)).toEqual([2, 1, 1, 2, 1]);
    const [channel] = agent.channels();
    expect(channel).toMatchObject({ deposited: 60_000n, charged: 5n * PRICE });
    expect(await depositsOf(site.gated, channel.channelId)).toHaveLength(2);
  });

  it('its answer lost: the next fetch of the page sends the same voucher, which the gate answers with the page and its token, charging nothing more', async () => {
    const lostPath = `/articles/${unique('lost')}`;
    let dropping = true;
    const proxy = await startDroppingProxy(
      site.url,
      (request) => dropping && request.url === lostPath && request.headers['payment-signature'] !== undefined,
    );
    try {
      const { agent, get } = await voucherAgent();
      const first = `/articles/${unique('first')}`;
      expect((await get(first, proxy.url)).status).toBe(200);
      await expect(get(lostPath, proxy.url)).rejects.toThrow();
      // The site took it: the gate charged the voucher sent ahead, its answer never came.
      expect(proxy.lost.map((answer) => answer.status)).toEqual([200]);
      dropping = false;
      expect(await get(lostPath, proxy.url)).toEqual({ status: 200, text: `content of ${lostPath}` });
      // Asked for first (a voucher of the channel is in doubt: nothing is paid ahead), then the lost voucher itself.
      const sent = site.of(lostPath);
      expect(sent.map((request) => request.payment)).toEqual([sent[0].payment, undefined, sent[0].payment]);
      const [channel] = agent.channels();
      expect((await paymentsOf(channel.channelId)).map((row) => [row.url, row.cumulativeAmount])).toEqual([
        [first, PRICE],
        [lostPath, 2n * PRICE],
      ]);
      // Then pages are paid ahead again, from the total the channel was charged.
      const next = `/articles/${unique('next')}`;
      expect((await get(next, proxy.url)).status).toBe(200);
      expect(site.of(next)).toHaveLength(1);
      expect((await paymentsOf(channel.channelId)).at(-1)).toMatchObject({ url: next, cumulativeAmount: 3n * PRICE });
    } finally {
      await proxy.close();
    }
  });

  it('the header a page was paid ahead with, sent by anyone on another page: 402, nothing served, nothing charged', async () => {
    const { agent, get } = await voucherAgent();
    const paid = `/articles/${unique('paid')}`;
    for (const path of [`/articles/${unique('first')}`, paid]) expect((await get(path)).status).toBe(200);
    const header = site.of(paid)[0].payment!;
    expect(header).toBeDefined();
    const [channel] = agent.channels();
    const before = await paymentsOf(channel.channelId);
    for (const other of [`/articles/${unique('other')}`, `${paid}-2`, `/cheap/${unique('c')}`]) {
      const replayed = await fetch(`${site.url}${other}`, {
        headers: { 'user-agent': GPTBOT, 'payment-signature': header },
      });
      const text = await replayed.text();
      expect([other, replayed.status, text.includes('content of')]).toEqual([other, 402, false]);
    }
    expect(await paymentsOf(channel.channelId)).toEqual(before);
  });

  it('vouchers naming no gate, made by anyone: a NUL byte in the path, a nested payload, 55 forged signatures each on a page of its own: 0 pages served, nothing charged', async () => {
    const { agent, get } = await voucherAgent();
    const paid = `/articles/${unique('paid')}`;
    for (const path of [`/articles/${unique('first')}`, paid]) expect((await get(path)).status).toBe(200);
    const sent = decodeBase64Json(site.of(paid)[0].payment!) as { payload: { voucher: Record<string, unknown> } };
    const [channel] = agent.channels();
    const before = await paymentsOf(channel.channelId);
    /** What the site answered `payment` on `path`: its status, whether it served, and the reason of its PAYMENT-RESPONSE. */
    const send = async (path: string, payment: unknown) => {
      const answer = await fetch(`${site.url}${path}`, {
        headers: { 'user-agent': GPTBOT, 'payment-signature': encodeBase64Json(payment) },
      });
      const settlement = answer.headers.get('payment-response');
      return {
        status: answer.status,
        served: (await answer.text()).includes('content of'),
        reason: settlement && (decodeBase64Json(settlement) as { errorReason?: string }).errorReason,
      };
    };
    // The channel's next total, as its payer would sign it, with a signature of the right form made by no one.
    const forged = (index: number) => {
      const byte = index.toString(16).padStart(2, '0');
      const signature = `0x${'1'.repeat(62)}${byte}${'2'.repeat(62)}${byte}1b`;
      const voucher = { ...sent.payload.voucher, maxClaimableAmount: String(channel.charged + PRICE), signature };
      return { ...sent, payload: { ...sent.payload, voucher } };
    };
    let nested: unknown = 1;
    for (let i = 0; i < 40; i++) nested = { a: nested };

    const refused = { status: 402, served: false, reason: 'invalid_batch_settlement_evm_voucher_signature' };
    // The API refuses a body nested that deep (400): the gate answers that nothing was settled.
    const tooDeep = { status: 402, served: false, reason: 'unexpected_settle_error' };
    expect(await send(`/articles/${unique('nul')}%00`, forged(1))).toEqual(refused);
    expect(await send(`/articles/${unique('nested')}`, { ...forged(2), extra: nested })).toEqual(tooDeep);
    const deepVoucher = forged(3);
    expect(
      await send(`/articles/${unique('nested-voucher')}`, {
        ...deepVoucher,
        payload: { ...deepVoucher.payload, extra: nested },
      }),
    ).toEqual(tooDeep);
    const answers = [];
    for (let batch = 0; batch < 5; batch++)
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 11 }, (_, i) => send(`/articles/${unique('forged')}`, forged(16 + batch * 11 + i))),
        )),
      );
    expect(answers).toEqual(answers.map(() => refused));
    expect(await paymentsOf(channel.channelId)).toEqual(before);
    // The payer's own next page is still paid ahead, once.
    const next = `/articles/${unique('next')}`;
    expect(await get(next)).toEqual({ status: 200, text: `content of ${next}` });
    expect(site.of(next).map((request) => request.payment !== undefined)).toEqual([true]);
  });
});

describe('batchSettlement.payAhead, the site no longer taking vouchers', () => {
  let site: LoggedSite;
  beforeAll(async () => {
    site = await startLoggedSite({ refreshMs: 200 });
  }, 60_000);
  afterAll(() => site?.close());

  it('the voucher sent ahead is refused: the page, asked for first, is paid from the offers of its 402 (exact)', async () => {
    const events: PaymentEvent[] = [];
    const { agent } = await fundedAgent(site.gated.app, {
      budgetUsd: '0.5',
      batchSettlement: { depositUsd: '0.2', payAhead: true },
      onPayment: (event) => events.push(event),
    });
    const [first, second] = ['/articles/before-off', '/articles/after-off'];
    expect((await agent.fetch(`${site.url}${first}`, asBot)).status).toBe(200);
    const off = await site.gated.app.call('PATCH', `/v1/sites/${site.gated.site.siteId}`, {
      body: { batch_settlement: false },
      headers: site.gated.publisher.auth,
    });
    expect(off.status).toBe(200);
    // Until the middleware's terms say so (refreshed every 200 ms).
    for (let tries = 0; ; tries++) {
      const offered = await fetch(`${site.url}/articles/probe`, asBot);
      await offered.body?.cancel();
      const required = decodeBase64Json(offered.headers.get('payment-required') ?? '') as
        { accepts?: { scheme: string }[] } | undefined;
      if (!required?.accepts?.some((accept) => accept.scheme === 'batch-settlement')) break;
      if (tries > 100) throw new Error('the middleware kept offering vouchers');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const response = await agent.fetch(`${site.url}${second}`, asBot);
    expect([response.status, await response.text()]).toEqual([200, `content of ${second}`]);
    expect(site.of(second).map((request) => request.payment !== undefined)).toEqual([true, false, true]);
    expect(events.map((event) => [event.url, event.mode])).toEqual([
      [`${site.url}${first}`, 'voucher'],
      [`${site.url}${second}`, 'authorization'],
    ]);
    expect(agent.channels()[0].charged).toBe(PRICE);

    // The origin refused a voucher outright: its pages are asked for first from then on. Two fetches
    // of one page at once share one payment (before, each restart woke the other to pay ahead again, without end).
    const third = '/articles/after-off-together';
    const together = await Promise.all([0, 1].map(() => agent.fetch(`${site.url}${third}`, asBot)));
    expect(await Promise.all(together.map(async (answer) => [answer.status, await answer.text()]))).toEqual([
      [200, `content of ${third}`],
      [200, `content of ${third}`],
    ]);
    expect(site.of(third)[0].payment).toBeUndefined();
    expect(site.of(third).filter((request) => request.payment !== undefined)).toHaveLength(1);
    expect(events.map((event) => event.mode)).toEqual(['voucher', 'authorization', 'authorization']);
  }, 30_000);

  it('refuses a payAhead that is not true or false', async () => {
    await expect(
      fundedAgent(site.gated.app, { batchSettlement: { depositUsd: '0.2', payAhead: 'yes' as unknown as boolean } }),
    ).rejects.toThrow(/batchSettlement.payAhead/);
  });
});
