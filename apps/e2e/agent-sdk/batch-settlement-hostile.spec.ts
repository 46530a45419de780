import {
  decodeBase64Json,
  encodeBase64Json,
  NETWORKS,
  VOUCHER_TYPES,
  X402_BATCH_SETTLEMENT_ADDRESS,
  batchSettlementDomain,
} from '@crawlgate/core';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent as Dispatcher, RetryAgent } from 'undici';
import { generatePrivateKey, privateKeyToAccount, toAccount, type LocalAccount } from 'viem/accounts';
import { BudgetExceededError, createAgent, PaymentFailedError, PriceTooHighError } from '../../../libs/agent-sdk/src';

/*
 * Sites that would have the agent's vouchers say more than it owes: crafted batch-settlement 402s
 * and corrective 402s from real HTTP servers on loopback. No chain: a site "accepts" a voucher by
 * answering 200 with a PAYMENT-RESPONSE stating the channel's total.
 */

const BASE_USDC = NETWORKS.base.usdc.address!;
const PRICE = 10_000n;
const PAY_TO = privateKeyToAccount(generatePrivateKey()).address;
const RECEIVER_AUTHORIZER = privateKeyToAccount(generatePrivateKey()).address;

interface Voucher {
  type: 'deposit' | 'voucher';
  channelConfig: { payer: string; receiver: string; salt: string };
  voucher: { channelId: `0x${string}`; maxClaimableAmount: string; signature: `0x${string}` };
  deposit?: { amount: string };
}

interface Site {
  url: string;
  /** Every voucher payload the site was sent, in order. */
  vouchers: Voucher[];
  close(): Promise<void>;
}

const sites: Site[] = [];
afterEach(async () => {
  await Promise.all(sites.splice(0).map((site) => site.close()));
});

function batchAccept(price = PRICE, extra: Record<string, unknown> = {}) {
  return {
    scheme: 'batch-settlement',
    network: 'eip155:8453',
    amount: price.toString(),
    asset: BASE_USDC,
    payTo: PAY_TO,
    maxTimeoutSeconds: 300,
    extra: {
      name: 'USD Coin',
      version: '2',
      receiverAuthorizer: RECEIVER_AUTHORIZER,
      withdrawDelay: 900,
      escrow: X402_BATCH_SETTLEMENT_ADDRESS,
      ...extra,
    },
  };
}

function answer402(response: ServerResponse, accepts: unknown[], error = 'payment_required') {
  const required = encodeBase64Json({ x402Version: 2, error, resource: { url: 'https://site/page' }, accepts });
  response.writeHead(402, { 'content-type': 'application/json', 'payment-required': required }).end('{}');
}

function answerPaid(response: ServerResponse, voucher: Voucher) {
  const settlement = {
    success: true,
    transaction: '',
    network: 'eip155:8453',
    payer: voucher.channelConfig.payer,
    extra: {
      chargedAmount: PRICE.toString(),
      channelState: {
        channelId: voucher.voucher.channelId,
        chargedCumulativeAmount: voucher.voucher.maxClaimableAmount,
      },
    },
  };
  response.writeHead(200, { 'payment-response': encodeBase64Json(settlement) }).end('the page');
}

/** A corrective 402 stating `charged` for the channel of `voucher`, with `voucherState` when given. */
function answerCorrection(
  response: ServerResponse,
  voucher: Voucher,
  charged: bigint,
  voucherState?: { signedMaxClaimable: string; signature: string },
  price = PRICE,
) {
  const channelState = {
    channelId: voucher.voucher.channelId,
    balance: '50000',
    totalClaimed: '0',
    withdrawRequestedAt: 0,
    refundNonce: '0',
    chargedCumulativeAmount: charged.toString(),
  };
  answer402(
    response,
    [batchAccept(price, { channelState, ...(voucherState ? { voucherState } : {}) })],
    'invalid_batch_settlement_evm_cumulative_amount_mismatch',
  );
}

/** A site that offers batch-settlement and hands each voucher it is sent (and its number) to `onVoucher`. */
async function startSite(
  onVoucher: (voucher: Voucher, response: ServerResponse, index: number) => void,
): Promise<Site> {
  const vouchers: Voucher[] = [];
  const server = createServer((request, response) => {
    const header = request.headers['payment-signature'];
    if (typeof header !== 'string') return answer402(response, [batchAccept()]);
    const voucher = (decodeBase64Json(header) as { payload: Voucher }).payload;
    vouchers.push(voucher);
    onVoucher(voucher, response, vouchers.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const site: Site = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    vouchers,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  sites.push(site);
  return site;
}

function voucherAgent(
  budgetUsd = '1',
  {
    depositUsd = '0.05',
    account = privateKeyToAccount(generatePrivateKey()) as LocalAccount,
    maxChannels = undefined as number | undefined,
  } = {},
) {
  return createAgent({
    account,
    maxPriceUsd: '0.05',
    budgetUsd,
    networks: ['base'],
    batchSettlement: { depositUsd, maxChannels },
  });
}

/** A wallet of a fresh key that runs `before` ahead of each typed-data signature (it may throw: the wallet refuses). */
function walletSigning(before: (typedData: { primaryType?: unknown }) => Promise<unknown>): LocalAccount {
  const key = privateKeyToAccount(generatePrivateKey());
  return toAccount({
    address: key.address,
    signMessage: (args) => key.signMessage(args),
    signTransaction: (tx) => key.signTransaction(tx),
    signTypedData: async (typedData) => {
      await before(typedData);
      return key.signTypedData(typedData as never);
    },
  });
}

/** A site whose 402s name a new receiverAuthorizer each time when `freshTerms`, and that accepts (or refuses) every payment. */
async function termsSite(options: {
  freshTerms: boolean;
  accept: boolean;
  maxTimeoutSeconds?: number;
  /** The page's price in atomic units; default 1. */
  price?: bigint;
}) {
  const deposits: Voucher[] = [];
  const offer = () => ({
    ...batchAccept(
      options.price ?? 1n,
      options.freshTerms ? { receiverAuthorizer: privateKeyToAccount(generatePrivateKey()).address } : {},
    ),
    maxTimeoutSeconds: options.maxTimeoutSeconds ?? 300,
  });
  const server = createServer((request, response) => {
    const header = request.headers['payment-signature'];
    if (typeof header !== 'string') return answer402(response, [offer()]);
    const voucher = (decodeBase64Json(header) as { payload: Voucher }).payload;
    if (voucher.type === 'deposit') deposits.push(voucher);
    if (options.accept) answerPaid(response, voucher);
    else answer402(response, [offer()]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sites.push({ url, vouchers: deposits, close: () => new Promise((resolve) => server.close(() => resolve())) });
  return { url, deposits };
}

/** A fetch's status, or the reason it was refused. */
const outcome = (fetching: Promise<Response>) =>
  fetching.then(
    (response) => response.status,
    (error: PaymentFailedError | BudgetExceededError) => ('reason' in error ? error.reason : error.name),
  );

const totals = (site: Site) => site.vouchers.map((v) => BigInt(v.voucher.maxClaimableAmount));

describe('a corrective 402', () => {
  it('asking for a higher total than the agent signed, without the agent’s voucher for it, is not followed', async () => {
    const site = await startSite((voucher, response, i) =>
      i === 0 ? answerPaid(response, voucher) : answerCorrection(response, voucher, 3n * PRICE),
    );
    const agent = voucherAgent();
    expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
    const failure = await agent.fetch(`${site.url}/two`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PaymentFailedError);
    expect((failure as PaymentFailedError).reason).toBe('channel_state_refused');
    expect(totals(site)).toEqual([PRICE, 2n * PRICE]); // no voucher for 4 × price
  });

  it('naming a total above what the agent signed with a voucher signed by another key is not followed', async () => {
    const forger = privateKeyToAccount(generatePrivateKey());
    const site = await startSite(async (voucher, response, i) => {
      if (i === 0) return answerPaid(response, voucher);
      const domain = batchSettlementDomain(8453, X402_BATCH_SETTLEMENT_ADDRESS);
      const signature = await forger.signTypedData({
        domain,
        types: VOUCHER_TYPES,
        primaryType: 'Voucher',
        message: { channelId: voucher.voucher.channelId, maxClaimableAmount: 4n * PRICE },
      });
      answerCorrection(response, voucher, 4n * PRICE, { signedMaxClaimable: (4n * PRICE).toString(), signature });
    });
    const agent = voucherAgent();
    expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
    await expect(agent.fetch(`${site.url}/two`)).rejects.toMatchObject({ reason: 'channel_state_refused' });
    expect(totals(site)).toEqual([PRICE, 2n * PRICE]);
  });

  it('claiming as charged the voucher it just refused, or part of it, is not followed: a page never costs more than its price', async () => {
    for (const claim of [(sent: bigint) => sent, (sent: bigint) => sent - PRICE / 2n]) {
      const site = await startSite((voucher, response, i) =>
        i === 0
          ? answerPaid(response, voucher)
          : answerCorrection(response, voucher, claim(BigInt(voucher.voucher.maxClaimableAmount))),
      );
      const agent = voucherAgent();
      expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
      await expect(agent.fetch(`${site.url}/two`)).rejects.toMatchObject({ reason: 'channel_state_refused' });
      expect(totals(site)).toEqual([PRICE, 2n * PRICE]); // never a third voucher, for 3 × price
      expect(agent.channels()[0]).toMatchObject({ charged: PRICE });
    }
  });

  it.each([
    [
      'a plain 402',
      (response: ServerResponse) =>
        answer402(response, [batchAccept()], 'invalid_batch_settlement_evm_cumulative_exceeds_balance'),
    ],
    [
      'a PAYMENT-RESPONSE saying it failed',
      (response: ServerResponse) =>
        response
          .writeHead(402, {
            'payment-response': encodeBase64Json({
              success: false,
              errorReason: 'unexpected_settle_error',
              transaction: '',
              network: 'eip155:8453',
            }),
          })
          .end('{}'),
    ],
  ])(
    'claiming as charged a voucher it refused with %s on an earlier page is not followed: the refused page is not paid on the next one',
    async (_name, refuse) => {
      const site = await startSite((voucher, response, i) => {
        if (i === 0) return answerPaid(response, voucher);
        if (i === 1) return refuse(response);
        const sent = BigInt(voucher.voucher.maxClaimableAmount);
        if (sent === 3n * PRICE) return answerPaid(response, voucher);
        answerCorrection(response, voucher, 2n * PRICE); // the refused voucher's total, as if it had been taken
      });
      const agent = voucherAgent();
      expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
      expect(await outcome(agent.fetch(`${site.url}/two`))).not.toBe(200);
      expect(await outcome(agent.fetch(`${site.url}/three`))).toBe('channel_state_refused');
      expect(totals(site)).toEqual([PRICE, 2n * PRICE, 2n * PRICE]); // never 3 × price for two pages
      expect(agent.channels()[0]).toMatchObject({ charged: PRICE });
    },
  );

  it.each([
    ['the voucher it was just sent', (sent: bigint) => sent],
    ['more than was deposited', () => 10n * PRICE],
  ])(
    'refusing a page with a correction the agent cannot follow (claiming %s) does not make that page’s voucher one the next page pays for',
    async (_what, claim) => {
      const site = await startSite((voucher, response, i) => {
        const sent = BigInt(voucher.voucher.maxClaimableAmount);
        if (i === 0 || sent === 3n * PRICE) return answerPaid(response, voucher);
        answerCorrection(response, voucher, i === 1 ? claim(sent) : 2n * PRICE);
      });
      const agent = voucherAgent();
      expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
      expect(await outcome(agent.fetch(`${site.url}/two`))).toBe('channel_state_refused');
      expect(await outcome(agent.fetch(`${site.url}/three`))).toBe('channel_state_refused');
      expect(totals(site)).toEqual([PRICE, 2n * PRICE, 2n * PRICE]);
      expect(agent.channels()[0]).toMatchObject({ charged: PRICE });
    },
  );

  it('naming a total below what the site already confirmed is not followed (it would have the agent pay again)', async () => {
    const site = await startSite((voucher, response, i) =>
      i < 2 ? answerPaid(response, voucher) : answerCorrection(response, voucher, 0n),
    );
    const agent = voucherAgent();
    expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
    expect((await agent.fetch(`${site.url}/two`)).status).toBe(200);
    await expect(agent.fetch(`${site.url}/three`)).rejects.toMatchObject({ reason: 'channel_state_refused' });
    expect(totals(site)).toEqual([PRICE, 2n * PRICE, 3n * PRICE]);
  });

  it('naming a total the agent did sign (a paid answer it never got) is followed, once, from that total', async () => {
    // The second voucher's answer is lost (the connection drops); the site then says it charged it.
    const site = await startSite((voucher, response, i) => {
      if (i === 1) return void response.socket?.destroy();
      if (i === 2) return answerCorrection(response, voucher, 2n * PRICE);
      answerPaid(response, voucher);
    });
    const agent = voucherAgent();
    expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
    await expect(agent.fetch(`${site.url}/two`)).rejects.toThrow();
    expect((await agent.fetch(`${site.url}/three`)).status).toBe(200);
    expect(totals(site)).toEqual([PRICE, 2n * PRICE, 2n * PRICE, 3n * PRICE]);
    expect(agent.channels()[0]).toMatchObject({ charged: 3n * PRICE, deposited: 50_000n });
  });

  it.each([
    ['a 502 to every resend', 502],
    ['a 200 without PAYMENT-RESPONSE', 200],
  ])(
    'after a voucher answered with %s (not counted as charged), naming that voucher’s total is followed, and naming more is not',
    async (_name, status) => {
      let phase: 'unconfirmed' | 'claimSent' | 'claimMore' = 'unconfirmed';
      const site = await startSite((voucher, response, i) => {
        if (i === 0) return answerPaid(response, voucher);
        if (phase === 'unconfirmed') return void response.writeHead(status).end('no word of the voucher');
        const sent = BigInt(voucher.voucher.maxClaimableAmount);
        // What the agent signed for /two (2 × price), or a page more than it ever signed.
        const claim = phase === 'claimSent' ? 2n * PRICE : 3n * PRICE;
        if (sent === claim + PRICE) return answerPaid(response, voucher);
        answerCorrection(response, voucher, claim);
      });
      const agent = voucherAgent();
      expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
      expect(await outcome(agent.fetch(`${site.url}/two`))).toBe(status === 200 ? 200 : 'payment_unconfirmed');
      const sentForTwo = site.vouchers.length - 1;
      expect(sentForTwo).toBe(status === 200 ? 1 : 7); // the same voucher, resent a bounded number of times
      expect(agent.channels()[0]).toMatchObject({ charged: PRICE });
      phase = 'claimMore';
      expect(await outcome(agent.fetch(`${site.url}/three`))).toBe('channel_state_refused');
      phase = 'claimSent';
      expect(await outcome(agent.fetch(`${site.url}/three`))).toBe(200);
      expect(totals(site).slice(1 + sentForTwo)).toEqual([2n * PRICE, 2n * PRICE, 3n * PRICE]);
      expect(agent.channels()[0]).toMatchObject({ charged: 3n * PRICE, deposited: 50_000n });
    },
    30_000, // six resends a second apart
  );

  it('naming a total above what the agent remembers, with the agent’s own voucher for exactly it, is followed (x402’s check)', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const site = await startSite(async (voucher, response, i) => {
      if (i !== 1) return answerPaid(response, voucher);
      const domain = batchSettlementDomain(8453, X402_BATCH_SETTLEMENT_ADDRESS);
      const signature = await account.signTypedData({
        domain,
        types: VOUCHER_TYPES,
        primaryType: 'Voucher',
        message: { channelId: voucher.voucher.channelId, maxClaimableAmount: 4n * PRICE },
      });
      answerCorrection(response, voucher, 4n * PRICE, { signedMaxClaimable: (4n * PRICE).toString(), signature });
    });
    const agent = createAgent({
      account,
      maxPriceUsd: '0.05',
      budgetUsd: '1',
      networks: ['base'],
      batchSettlement: { depositUsd: '0.05' },
    });
    expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
    expect((await agent.fetch(`${site.url}/two`)).status).toBe(200);
    expect(totals(site)).toEqual([PRICE, 2n * PRICE, 5n * PRICE]);
  });

  it('naming the token under another signing domain is not followed: the next deposit would be signed under it', async () => {
    // Charged 0 (what the agent knows) at a higher price, for a token named "Evil Coin" version 9:
    // the allow-list refuses such an offer; a correction must not get round it.
    const site = await startSite((voucher, response, i) => {
      if (i > 0) return answerPaid(response, voucher);
      const channelState = {
        channelId: voucher.voucher.channelId,
        balance: '10000',
        totalClaimed: '0',
        withdrawRequestedAt: 0,
        refundNonce: '0',
        chargedCumulativeAmount: '0',
      };
      answer402(
        response,
        [batchAccept(2n * PRICE, { channelState, name: 'Evil Coin', version: '9' })],
        'invalid_batch_settlement_evm_cumulative_amount_mismatch',
      );
    });
    const agent = voucherAgent('1', { depositUsd: '0.01' });
    expect(await outcome(agent.fetch(`${site.url}/one`))).toBe('channel_state_refused');
    expect(site.vouchers).toHaveLength(1);
  });

  it('asking a price above maxPriceUsd is refused before anything is signed', async () => {
    const site = await startSite((voucher, response) => answerCorrection(response, voucher, 0n, undefined, 100_000n));
    const agent = voucherAgent();
    await expect(agent.fetch(`${site.url}/one`)).rejects.toBeInstanceOf(PriceTooHighError);
    expect(site.vouchers).toHaveLength(1);
  });

  it('that never agrees stops after two corrections', async () => {
    const site = await startSite((voucher, response) => answerCorrection(response, voucher, 0n));
    const agent = voucherAgent();
    await expect(agent.fetch(`${site.url}/one`)).rejects.toBeInstanceOf(PaymentFailedError);
    expect(site.vouchers).toHaveLength(3);
    // One deposit authorization, resent: refusing it again and again does not make the agent sign more.
    expect(new Set(site.vouchers.map((v) => JSON.stringify(v.deposit)))).toHaveProperty('size', 1);
    expect(agent.spent()).toMatchObject({ usd: '0', remainingUsd: '0.95' }); // refused, so not spent, but held while it could be made
    // The next page resends it too.
    await expect(agent.fetch(`${site.url}/two`)).rejects.toBeInstanceOf(PaymentFailedError);
    expect(new Set(site.vouchers.map((v) => JSON.stringify(v.deposit)))).toHaveProperty('size', 1);
  });
});

describe('the budget', () => {
  it('caps the deposits, and no voucher is signed above them', async () => {
    const site = await startSite((voucher, response) => answerPaid(response, voucher));
    const agent = voucherAgent('0.02');
    expect((await agent.fetch(`${site.url}/one`)).status).toBe(200);
    expect((await agent.fetch(`${site.url}/two`)).status).toBe(200);
    await expect(agent.fetch(`${site.url}/three`)).rejects.toBeInstanceOf(BudgetExceededError);
    expect(site.vouchers.map((v) => [v.type, v.voucher.maxClaimableAmount, v.deposit?.amount])).toEqual([
      ['deposit', '10000', '20000'],
      ['voucher', '20000', undefined],
    ]);
  });

  it('holds nothing back when the wallet refuses to sign the voucher: the deposit never left', async () => {
    let refuseVoucher = true;
    const wallet = walletSigning(async (typedData) => {
      if (typedData.primaryType === 'Voucher' && refuseVoucher) {
        refuseVoucher = false;
        throw new Error('the user rejected the request');
      }
    });
    const site = await startSite((voucher, response) => answerPaid(response, voucher));
    const agent = voucherAgent('1', { account: wallet });
    await expect(agent.fetch(`${site.url}/one`)).rejects.toThrow(/rejected/);
    expect(site.vouchers).toHaveLength(0);
    expect(agent.spent().remainingUsd).toBe('1');
    expect((await agent.fetch(`${site.url}/two`)).status).toBe(200);
    expect(site.vouchers.map((v) => [v.type, v.deposit?.amount])).toEqual([['deposit', '50000']]);
    expect(agent.spent().remainingUsd).toBe('0.95');
  });

  it('counts no deposit of a page whose caller gave up while it waited for the channel: it never left', async () => {
    // The first page's answer is slow; the second page, queued behind it on the channel, times out.
    const site = await startSite((voucher, response, i) => {
      if (i === 0) setTimeout(() => answerPaid(response, voucher), 600);
      else answerPaid(response, voucher);
    });
    const agent = voucherAgent('1', { depositUsd: '0.01' });
    const [one, two] = await Promise.all([
      outcome(agent.fetch(`${site.url}/one`)),
      outcome(agent.fetch(`${site.url}/two`, { signal: AbortSignal.timeout(150) })),
    ]);
    expect([one, two]).toEqual([200, 'TimeoutError']);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the second page's turn, ended
    expect(site.vouchers).toHaveLength(1);
    expect(agent.spent()).toMatchObject({ usd: '0.01', remainingUsd: '0.99' });
    expect(agent.channels()[0]).toMatchObject({ deposited: PRICE, charged: PRICE });
    // The next page brings the deposit it needs: a voucher above the deposits would be refused.
    expect(await outcome(agent.fetch(`${site.url}/three`))).toBe(200);
    expect(site.vouchers.map((v) => [v.type, v.voucher.maxClaimableAmount, v.deposit?.amount])).toEqual([
      ['deposit', '10000', '10000'],
      ['deposit', '20000', '10000'],
    ]);
  });

  it('counts no deposit of a page whose caller gave up while the wallet signed: it never left', async () => {
    let slowVoucher = true;
    const wallet = walletSigning(async (typedData) => {
      if (typedData.primaryType === 'Voucher' && slowVoucher) {
        slowVoucher = false;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    });
    const site = await startSite((voucher, response) => answerPaid(response, voucher));
    const agent = voucherAgent('1', { depositUsd: '0.01', account: wallet });
    expect(await outcome(agent.fetch(`${site.url}/one`, { signal: AbortSignal.timeout(100) }))).toBe('TimeoutError');
    // The caller is answered at once; the payment it started ends when the wallet has signed.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(site.vouchers).toHaveLength(0);
    expect(agent.spent()).toMatchObject({ usd: '0', remainingUsd: '1' });
    expect(await outcome(agent.fetch(`${site.url}/two`))).toBe(200);
    expect(site.vouchers.map((v) => [v.type, v.voucher.maxClaimableAmount, v.deposit?.amount])).toEqual([
      ['deposit', '10000', '10000'],
    ]);
  });

  it('counts the deposit of a page whose paid request could not connect: fetch may have sent it on an earlier connection (after a 421)', async () => {
    // The site answers the 402, closes the connection and stops listening: the paid request is refused.
    const server = createServer((_request, response) => {
      response.setHeader('connection', 'close');
      answer402(response, [batchAccept()]);
      server.close();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = voucherAgent('1', { depositUsd: '0.01' });
    await expect(agent.fetch(`${url}/one`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    expect(agent.spent()).toMatchObject({ usd: '0.01', remainingUsd: '0.99' });
    expect(agent.channels()).toMatchObject([{ deposited: PRICE }]);
  });

  it('counts the deposit of a page the site read and answered 421: fetch sends it again on a new connection, which a site that stopped listening refuses', async () => {
    const server = createServer((request, response) => {
      // The 402's connection is not kept: the paid request comes on a connection of its own.
      if (typeof request.headers['payment-signature'] !== 'string')
        return answer402(response.setHeader('connection', 'close'), [batchAccept()]);
      response.writeHead(421, { 'content-length': '0' }).end();
      server.close();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = voucherAgent('0.01', { depositUsd: '0.01' });
    await expect(agent.fetch(`${url}/one`)).rejects.toThrow();
    expect(agent.spent()).toMatchObject({ usd: '0.01', remainingUsd: '0' });
    expect(agent.channels()).toMatchObject([{ deposited: PRICE }]);
  });

  it('counts the deposit of a page whose paid request a retrying dispatcher hid: the site had it, though the last attempt could not connect', async () => {
    const dispatcher = new RetryAgent(new Dispatcher(), { maxRetries: 1, minTimeout: 10 });
    const server = createServer((request, response) => {
      if (typeof request.headers['payment-signature'] !== 'string') return answer402(response, [batchAccept()]);
      response.socket?.destroy(); // read, then gone
      server.close();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = voucherAgent('0.01', { depositUsd: '0.01' });
    await expect(agent.fetch(`${url}/one`, { dispatcher } as RequestInit)).rejects.toMatchObject({
      cause: { code: 'ECONNREFUSED' },
    });
    expect(agent.spent()).toMatchObject({ usd: '0.01', remainingUsd: '0' });
    expect(agent.channels()).toMatchObject([{ deposited: PRICE }]);
    await dispatcher.close();
  });

  it('is not locked up in channels by a site that names new channel terms on every page', async () => {
    // Every 402 names another receiverAuthorizer: each would be a new channel, with a deposit of its own.
    const site = await termsSite({ freshTerms: true, accept: true });
    const agent = voucherAgent('1', { depositUsd: '0.25' });
    const results = [];
    for (const page of ['/1', '/2', '/3', '/4']) results.push(await outcome(agent.fetch(`${site.url}${page}`)));
    expect(results).toEqual([200, 200, 'channel_limit', 'channel_limit']);
    expect(site.deposits).toHaveLength(2);
    expect(agent.spent().remainingUsd).toBe('0.5');
  });
});

describe('refused deposits and new channel terms', () => {
  it('a site offering deposits valid for less than a minute gets none: each would be spent unseen', async () => {
    const site = await termsSite({ freshTerms: false, accept: false, maxTimeoutSeconds: 5 });
    const agent = voucherAgent('1');
    for (const page of ['/1', '/2'])
      expect(await outcome(agent.fetch(`${site.url}${page}`))).toBe('deposit_window_too_short');
    expect(site.deposits).toHaveLength(0);
    expect(agent.spent().remainingUsd).toBe('1');
  });

  it('a refused deposit is held for its channel, and counts against the channels an origin may hold', async () => {
    const site = await termsSite({ freshTerms: true, accept: false });
    const agent = voucherAgent('1', { depositUsd: '0.25' });
    const results = [];
    for (const page of ['/1', '/2', '/3', '/4']) results.push(await outcome(agent.fetch(`${site.url}${page}`)));
    expect(results).toEqual(['payment_refused', 'payment_refused', 'channel_limit', 'channel_limit']);
    expect(site.deposits).toHaveLength(2);
    // Reserved, not spent: the site holds them unused (no chain here to tell more).
    expect(agent.spent()).toMatchObject({ usd: '0', remainingUsd: '0.5' });
    expect(agent.channels()).toHaveLength(2);
  });

  it('concurrent fetches naming new terms open no more channels than an origin may hold (a slow wallet)', async () => {
    const site = await termsSite({ freshTerms: true, accept: true });
    const slow = walletSigning(() => new Promise((resolve) => setTimeout(resolve, 20)));
    const agent = voucherAgent('1', { depositUsd: '0.25', account: slow });
    const results = await Promise.all(
      ['/1', '/2', '/3', '/4'].map((page) => outcome(agent.fetch(`${site.url}${page}`))),
    );
    expect(results.sort()).toEqual([200, 200, 'channel_limit', 'channel_limit']);
    expect(site.deposits).toHaveLength(2);
    expect(agent.channels()).toHaveLength(2);
    expect(agent.spent().remainingUsd).toBe('0.5');
  });
});

describe('many origins (a wildcard DNS site sending the agent to a.evil.example, b.evil.example, …)', () => {
  /** `count` origins offering batch-settlement only, each its own server, accepting every payment. */
  const origins = (count: number) =>
    Promise.all(Array.from({ length: count }, () => termsSite({ freshTerms: false, accept: true })));

  it('open no more channels than batchSettlement.maxChannels: a new origin offering only vouchers is refused, nothing deposited', async () => {
    const [a, b, c] = await origins(3);
    const agent = voucherAgent('1', { depositUsd: '0.25', maxChannels: 2 });
    expect(await outcome(agent.fetch(`${a.url}/1`))).toBe(200);
    expect(await outcome(agent.fetch(`${b.url}/1`))).toBe(200);
    const failure = await agent.fetch(`${c.url}/1`).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PaymentFailedError);
    expect(failure).toMatchObject({ reason: 'channel_limit', message: /batchSettlement\.maxChannels/ });
    expect(c.deposits).toHaveLength(0);
    expect(agent.channels().map((channel) => channel.origin)).toEqual([a.url, b.url]);
    expect(agent.spent().remainingUsd).toBe('0.5');
    // The channels it holds keep taking vouchers.
    expect(await outcome(agent.fetch(`${a.url}/2`))).toBe(200);
    expect(await outcome(agent.fetch(`${b.url}/2`))).toBe(200);
    expect(a.deposits.length + b.deposits.length).toBe(2);
  });

  it('hold at most 4 channels by default', async () => {
    const sites = await origins(5);
    const agent = voucherAgent('1', { depositUsd: '0.1' });
    const results = [];
    for (const site of sites) results.push(await outcome(agent.fetch(`${site.url}/1`)));
    expect(results).toEqual([200, 200, 200, 200, 'channel_limit']);
    expect(sites[4].deposits).toHaveLength(0);
    expect(agent.spent().remainingUsd).toBe('0.6');
  });

  it('fetched at once with one place left, open one channel (a slow wallet)', async () => {
    const [a, b, c] = await origins(3);
    const slow = walletSigning(() => new Promise((resolve) => setTimeout(resolve, 20)));
    const agent = voucherAgent('1', { depositUsd: '0.25', account: slow, maxChannels: 2 });
    expect(await outcome(agent.fetch(`${a.url}/1`))).toBe(200);
    const results = await Promise.all([b, c].map((site) => outcome(agent.fetch(`${site.url}/1`))));
    expect(results.sort()).toEqual([200, 'channel_limit']);
    expect(b.deposits.length + c.deposits.length).toBe(1);
    expect(agent.channels()).toHaveLength(2);
    expect(agent.spent().remainingUsd).toBe('0.5');
  });

  it('count a channel spent down to its deposit as taking a place again when it would be topped up', async () => {
    // Each channel spent page by page down to its deposit frees its place, then a top-up takes one
    // again: without the check, N origins would each hold a deposit whatever maxChannels says.
    const [a, b] = await Promise.all([1, 2].map(() => termsSite({ freshTerms: false, accept: true, price: PRICE })));
    const agent = voucherAgent('1', { depositUsd: '0.02', maxChannels: 1 });
    expect(await outcome(agent.fetch(`${a.url}/1`))).toBe(200);
    expect(await outcome(agent.fetch(`${a.url}/2`))).toBe(200); // a's deposit all charged
    expect(await outcome(agent.fetch(`${b.url}/1`))).toBe(200);
    expect(await outcome(agent.fetch(`${a.url}/3`))).toBe('channel_limit');
    expect(a.deposits).toHaveLength(1);
    expect(b.deposits).toHaveLength(1);
  });

  it('count a refused deposit the site keeps as a held place', async () => {
    const refusing = await termsSite({ freshTerms: false, accept: false });
    const [b, c] = await origins(2);
    const agent = voucherAgent('1', { depositUsd: '0.25', maxChannels: 2 });
    expect(await outcome(agent.fetch(`${refusing.url}/1`))).toBe('payment_refused');
    expect(await outcome(agent.fetch(`${b.url}/1`))).toBe(200);
    expect(await outcome(agent.fetch(`${c.url}/1`))).toBe('channel_limit');
    expect(c.deposits).toHaveLength(0);
  });
});

describe('another origin with the same terms', () => {
  it('never gets a voucher of the first origin’s channel: it gets its own channel, charged its own price', async () => {
    const first = await startSite((voucher, response) => answerPaid(response, voucher));
    const copycat = await startSite((voucher, response) => answerPaid(response, voucher));
    const agent = voucherAgent();
    for (const path of ['/a', '/b', '/c']) expect((await agent.fetch(`${first.url}${path}`)).status).toBe(200);
    expect((await agent.fetch(`${copycat.url}/a`)).status).toBe(200);
    const ours = first.vouchers[0].voucher.channelId;
    expect(new Set(first.vouchers.map((v) => v.voucher.channelId))).toEqual(new Set([ours]));
    expect(copycat.vouchers).toHaveLength(1);
    expect(copycat.vouchers[0]).toMatchObject({ type: 'deposit', voucher: { maxClaimableAmount: PRICE.toString() } });
    expect(copycat.vouchers[0].voucher.channelId).not.toBe(ours);
    expect(copycat.vouchers[0].channelConfig.salt).not.toBe(first.vouchers[0].channelConfig.salt);
  });

  it('never gets the voucher through a redirect: a paid retry sent elsewhere arrives there without it', async () => {
    const elsewhere: (string | undefined)[] = [];
    const other = createServer((request, response) => {
      elsewhere.push(request.headers['payment-signature'] as string | undefined);
      response.end('elsewhere');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const site = await startSite((_voucher, response) =>
        response.writeHead(307, { location: `${otherUrl}/landing` }).end(),
      );
      const agent = voucherAgent();
      await agent.fetch(`${site.url}/one`).catch(() => undefined);
      expect(site.vouchers).toHaveLength(1);
      expect(elsewhere.length).toBeGreaterThan(0);
      expect(elsewhere.filter(Boolean)).toEqual([]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
