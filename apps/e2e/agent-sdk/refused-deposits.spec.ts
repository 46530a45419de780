import { decodeBase64Json, parseBatchSettlementPayment } from '@crawlgate/core';
import { increaseTime } from '@crawlgate/devchain';
import { depositCalldata } from '../../../apps/api/src/chain/escrow';
import { PaymentFailedError } from '../../../libs/agent-sdk/src';
import { GPTBOT } from '../middleware/support/gated-site';
import { FRAMEWORKS, type SiteServer } from '../middleware/support/site-servers';
import { startVoucherSite } from '../middleware/support/voucher-site';
import { fundedAgent } from './support/funded-agent';
import { startRefusingProxy } from './support/refusing-proxy';

/*
 * A site that refuses the batch-settlement deposits it is sent and keeps them. A refused deposit
 * the agent no longer resends (the next page needs more) is settled from the chain once expired:
 * freed when nobody made it, spent when the site made it after refusing it. Real gated site (Express),
 * API and local chain (this file's own: its clock is moved forward).
 */
describe('@crawlgate/agent: deposits a site refused', () => {
  let voucherSite: Awaited<ReturnType<typeof startVoucherSite>>;
  let priced: SiteServer;
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>;

  beforeAll(async () => {
    voucherSite = await startVoucherSite();
    await voucherSite.site.setPricing({
      default_price_usd: '0.01',
      rules: [{ path: '/premium/*', price_usd: '0.02' }],
    });
    // A server of its own, started once the prices are set: it reads them at start.
    priced = await FRAMEWORKS[0].start(voucherSite.site.options());
    refusing = await startRefusingProxy(priced.url);
  }, 60_000);
  afterAll(async () => {
    await refusing?.close();
    await priced?.close();
    await voucherSite?.close();
  }, 60_000);

  /** An agent whose first deposit (0.01, for a 0.01 page) was refused, then outgrown by a 0.02 page's, refused too. */
  async function outgrownDeposit() {
    const app = voucherSite.site.app;
    const { wallet, agent } = await fundedAgent(app, { budgetUsd: '0.1', batchSettlement: { depositUsd: '0.01' } });
    const fetchPage = (path: string) => agent.fetch(`${refusing.url}${path}`, { headers: { 'user-agent': GPTBOT } });
    const { kept } = refusing;
    const before = kept.length;
    await expect(fetchPage(`/article/${wallet.address}`)).rejects.toBeInstanceOf(PaymentFailedError);
    const first = kept[kept.length - 1];
    await expect(fetchPage(`/premium/${wallet.address}`)).rejects.toBeInstanceOf(PaymentFailedError);
    expect(kept).toHaveLength(before + 2);
    const amounts = kept.slice(before).map((header) => depositOf(header).amount);
    expect(amounts).toEqual([10_000n, 20_000n]);
    // Both reserved: the site holds both authorizations, neither expired.
    expect(await agent.spending()).toMatchObject({ usd: '0', remainingUsd: '0.07' });
    return { agent, first };
  }

  function depositOf(header: string) {
    const parsed = parseBatchSettlementPayment(decodeBase64Json(header));
    if (!parsed.ok || !parsed.payment.deposit) throw new Error('not a deposit payment');
    return { config: parsed.payment.channelConfig, ...parsed.payment.deposit };
  }

  it('frees the outgrown deposit nobody made, and counts the one the site made after refusing it as spent', async () => {
    const unused = await outgrownDeposit();
    const made = await outgrownDeposit();
    // The site makes the second agent's first deposit after all, before it expires.
    const app = voucherSite.site.app;
    const batch = app.chain.batchSettlement!;
    const deposit = depositOf(made.first);
    const hash = await app.chain.relayer.sendTransaction({
      to: batch.escrow,
      data: depositCalldata(batch, deposit.config, deposit.amount, deposit.erc3009),
    });
    expect((await app.chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');

    // Not before the chain's clock is past validBefore (300 s at most) and the agent's reorg margin (60 s).
    for (const { agent } of [unused, made]) expect(await agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
    await increaseTime(app.chain.rpcUrl, 361);
    expect(await unused.agent.settleRefused()).toEqual({ freed: 1, spent: 0 });
    expect(await unused.agent.spending()).toMatchObject({ usd: '0', remainingUsd: '0.08' });
    expect(await made.agent.settleRefused()).toEqual({ freed: 0, spent: 1 });
    expect(await made.agent.spending()).toMatchObject({ usd: '0.01', remainingUsd: '0.07' });
    // The kept 0.02 deposit stays reserved: the agent may still resend it.
    for (const { agent } of [unused, made]) expect(await agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
  }, 60_000);
});
