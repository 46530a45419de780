/*
 * A payment on its way to the chain: the gate answers 503, and the payer retries with the same
 * PAYMENT-SIGNATURE, as the 503 tells it to. It must get the page it paid for, paying once: when the
 * publisher raised the price meanwhile (and nobody may start a new payment at the old price), and on
 * a target with ";" parameters, which a router may read as another path; and a batch-settlement
 * voucher sent again after its answer was lost, the price raised or vouchers turned off meanwhile.
 * The real API (its settlements held back by a chain that mines nothing), a real Fastify server
 * with the gate, the local chain.
 */

import { decodeBase64Json, encodeBase64Json, exactPaymentV2, type PaymentRequiredV2 } from '@crawlgate/core';
import { devTestClient } from '@crawlgate/devchain';
import { fundUsdc, newWallet, signOffer, transfersTo } from '../../../apps/api/test/test-agent';
import { testChannel, type BatchOffer } from '../../../apps/api/test/test-channel';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest, type Answer } from './support/raw-request';
import { FRAMEWORKS, type SiteServer } from './support/site-servers';
import { switchOnBatchSettlement } from './support/voucher-site';

const fastify = FRAMEWORKS.find((framework) => framework.name === 'Fastify')!;
const bot = { 'user-agent': GPTBOT };

let gated: GatedSite;
let server: SiteServer;
beforeAll(async () => {
  gated = await startGatedSite({
    app: { isolateChain: true, config: { chain: { settlementTimeoutMs: 500, reconcileIntervalMs: 200 } } },
  });
  await gated.setPricing({ default_price_usd: '0.01', rules: [] });
  server = await fastify.start(gated.options({ refreshMs: 100 }));
}, 60_000);
afterAll(async () => {
  await server?.close();
  await gated?.close();
}, 60_000);

const served = (answer: Answer) => answer.status === 200 && answer.text.includes('<h1>Article ');

/** A v2 PAYMENT-SIGNATURE paying the gate of this 402, signed by `payer`. */
async function paymentOf(offered: Answer, payer: ReturnType<typeof newWallet>): Promise<string> {
  const required = decodeBase64Json(String(offered.headers['payment-required'])) as PaymentRequiredV2;
  const signed = await signOffer(gated.app, payer, JSON.parse(offered.text) as never);
  return encodeBase64Json(
    exactPaymentV2(required.accepts[0], signed.authorization, signed.signature, { resource: required.resource }),
  );
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `payment` sent on `page` while the chain mines nothing (503: pending), `meanwhile` run, then sent
 * again until the settlement is confirmed: the answer to that retry.
 */
async function paidWhilePending(page: string, payment: string, meanwhile = async () => undefined): Promise<Answer> {
  const chain = devTestClient(gated.app.chain.rpcUrl);
  await chain.setAutomine(false);
  try {
    expect((await rawRequest(server, page, { ...bot, 'payment-signature': payment })).status).toBe(503);
    await meanwhile();
  } finally {
    await chain.setAutomine(true);
  }
  await chain.mine({ blocks: 1 });
  return until(
    () => rawRequest(server, page, { ...bot, 'payment-signature': payment }),
    (answer) => answer.status !== 503,
    'the settlement to be confirmed',
  );
}

it('serves a page paid before its price rose to the payer retrying with the same payment, and takes no new payment at the old price', async () => {
  const payer = newWallet();
  await fundUsdc(gated.app, payer.address, '1');
  const page = '/articles/price-rise';
  const offered = await rawRequest(server, page, bot);
  expect([offered.status, offered.headers['crawler-price']]).toEqual([402, 'USD 0.01']);
  const payment = await paymentOf(offered, payer);
  // Offered at the old price too, and left unpaid until the price rose.
  const other = '/articles/price-rise-other';
  const unpaid = await rawRequest(server, other, bot);
  const before = (await transfersTo(gated.app, gated.payTo)).length;

  const retried = await paidWhilePending(page, payment, async () => {
    await gated.setPricing({ default_price_usd: '0.02', rules: [] });
    await until(
      () => rawRequest(server, '/articles/price-probe', bot),
      (answer) => answer.headers['crawler-price'] === 'USD 0.02',
      'the gate to load the new price',
    );
  });
  expect({ status: retried.status, served: served(retried) }).toEqual({ status: 200, served: true });
  expect(retried.headers['x-crawlgate-token']).toBeDefined();

  // The gate offered at the old price, paid now with a new authorization: refused, nothing sent to the chain.
  const late = await rawRequest(server, other, { ...bot, 'payment-signature': await paymentOf(unpaid, payer) });
  expect({ status: late.status, served: served(late) }).toEqual({ status: 402, served: false });
  expect(late.headers['crawler-price']).toBe('USD 0.02');
  expect(await transfersTo(gated.app, gated.payTo)).toHaveLength(before + 1);
}, 60_000);

it.each([
  ['/articles/session;jsessionid=abc', '/articles/other;/../session;jsessionid=abc'],
  ['/articles/hello%20world;jsessionid=abc', '/articles/other;/../hello%20world;jsessionid=abc'],
])(
  'serves %s to the payer retrying with the same payment, paying once, and never %s',
  async (page, elsewhere) => {
    const payer = newWallet();
    await fundUsdc(gated.app, payer.address, '1');
    // A router cutting at ";" reads it as /articles/session, the gate as a path with a ";":
    // paid for each time (no token opens it), at the highest of both readings' prices.
    const offered = await rawRequest(server, page, bot);
    expect(offered.status).toBe(402);
    const payment = await paymentOf(offered, payer);
    const before = (await transfersTo(gated.app, gated.payTo)).length;

    const retried = await paidWhilePending(page, payment);
    expect({ status: retried.status, served: served(retried) }).toEqual({ status: 200, served: true });
    expect(await transfersTo(gated.app, gated.payTo)).toHaveLength(before + 1);
    // Sent again on a target the gate reads as the same path and the router as another: never opened.
    const other = await rawRequest(server, elsewhere, { ...bot, 'payment-signature': payment });
    expect({ status: other.status, served: served(other) }).toEqual({ status: 402, served: false });
  },
  60_000,
);

const offersVouchers = (answer: Answer) =>
  (decodeBase64Json(String(answer.headers['payment-required'])) as PaymentRequiredV2).accepts.some(
    (requirement) => requirement.scheme === 'batch-settlement',
  );

/** The batch-settlement offer of a 402 from the gate (its gate id, and the requirement from PAYMENT-REQUIRED). */
function voucherOffer(offered: Answer): BatchOffer {
  const required = decodeBase64Json(String(offered.headers['payment-required'])) as PaymentRequiredV2;
  const accepted = required.accepts.find((requirement) => requirement.scheme === 'batch-settlement');
  if (!accepted) throw new Error('the 402 offers no batch-settlement');
  return { id: (JSON.parse(offered.text) as { id: string }).id, accepted };
}

it('serves a page paid by a voucher to the payer sending it again (its answer lost) after the price rose and after vouchers were turned off, and takes no new voucher at the old price', async () => {
  await switchOnBatchSettlement(gated);
  await gated.setPricing({ default_price_usd: '0.01', rules: [] });
  const probe = () => rawRequest(server, '/articles/voucher-price-probe', bot);
  await until(
    probe,
    (answer) => answer.headers['crawler-price'] === 'USD 0.01' && offersVouchers(answer),
    'the gate to load the price and offer vouchers',
  );
  const payer = newWallet();
  await fundUsdc(gated.app, payer.address, '1');
  const page = '/articles/voucher-price-rise';
  const offer = voucherOffer(await rawRequest(server, page, bot));
  const channel = testChannel(gated.app, payer, offer.accepted);
  const payment = encodeBase64Json(await channel.payment(offer, 10_000n, { deposit: 50_000n }));
  // Offered at the old price too, and left unpaid until the price rose.
  const other = '/articles/voucher-price-rise-other';
  const unpaid = voucherOffer(await rawRequest(server, other, bot));
  const first = await rawRequest(server, page, { ...bot, 'payment-signature': payment });
  expect({ status: first.status, served: served(first) }).toEqual({ status: 200, served: true });

  await gated.setPricing({ default_price_usd: '0.02', rules: [] });
  await until(probe, (answer) => answer.headers['crawler-price'] === 'USD 0.02', 'the gate to load the new price');
  const again = await rawRequest(server, page, { ...bot, 'payment-signature': payment });
  expect({ status: again.status, served: served(again) }).toEqual({ status: 200, served: true });
  expect(again.headers['x-crawlgate-token']).toBeDefined();

  // The channel's next voucher for the gate offered at the old price: refused.
  const late = await rawRequest(server, other, {
    ...bot,
    'payment-signature': encodeBase64Json(await channel.payment(unpaid, 20_000n)),
  });
  expect({ status: late.status, served: served(late) }).toEqual({ status: 402, served: false });
  expect(late.headers['crawler-price']).toBe('USD 0.02');
  // Charged once: the next voucher at today's price is for 10,000 + 20,000, and it pays.
  const fresh = voucherOffer(await rawRequest(server, other, bot));
  const paid = await rawRequest(server, other, {
    ...bot,
    'payment-signature': encodeBase64Json(await channel.payment(fresh, 30_000n)),
  });
  expect({ status: paid.status, served: served(paid) }).toEqual({ status: 200, served: true });

  // The publisher turns vouchers off: a voucher taken before, sent again, still reads its page.
  const off = await gated.app.call('PATCH', `/v1/sites/${gated.site.siteId}`, {
    body: { batch_settlement: false },
    headers: gated.publisher.auth,
  });
  expect(off.status).toBe(200);
  await until(probe, (answer) => !offersVouchers(answer), 'the gate to stop offering vouchers');
  const afterOff = await rawRequest(server, page, { ...bot, 'payment-signature': payment });
  expect({ status: afterOff.status, served: served(afterOff) }).toEqual({ status: 200, served: true });
}, 60_000);
