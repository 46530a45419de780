import { crawlgateExpress } from '@crawlgate/middleware/express';
import { decodeBase64Json, USDC_ABI } from '@crawlgate/core';
import { increaseTime } from '@crawlgate/devchain';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWalletClient, http, type Hex } from 'viem';
import { startGatedSite, GPTBOT, type GatedSite } from '../middleware/support/gated-site';
import { fundEth, newWallet, usdcBalance } from '../../../apps/api/test/test-agent';
import { PaymentFailedError } from '../../../libs/agent-sdk/src';
import { fundedAgent } from './support/funded-agent';
import { startRefusingProxy } from './support/refusing-proxy';

/*
 * A site that refuses the authorizations it is sent and keeps them: the agent keeps each one's
 * price reserved until the chain's clock passes its validBefore, then frees it if it was never
 * used, or counts it spent if the site settled it after refusing it. Real gated site, API and
 * local chain (a chain of this file's own: its clock is moved forward).
 */
describe('@crawlgate/agent: authorizations a site refused', () => {
  let gated: GatedSite;
  let site: Server;
  let refusing: Awaited<ReturnType<typeof startRefusingProxy>>;
  let refusingUrl: string;
  /** The payment headers the refusing site kept. */
  let kept: string[];
  const PRICE = 10_000n; // the gated site's default 0.01 USD

  beforeAll(async () => {
    gated = await startGatedSite();
    const app = express();
    app.use(crawlgateExpress(gated.options()));
    app.get('/{*path}', (req, res) => void res.send(`content of ${req.path}`));
    site = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => site.once('listening', resolve));
    refusing = await startRefusingProxy(`http://127.0.0.1:${(site.address() as AddressInfo).port}`);
    ({ url: refusingUrl, kept } = refusing);
  }, 60_000);
  afterAll(async () => {
    await refusing.close();
    await new Promise((resolve) => site.close(resolve));
    await gated.close();
  }, 60_000);

  async function refusedAgent() {
    const { wallet, agent } = await fundedAgent(gated.app);
    const before = kept.length;
    await expect(
      agent.fetch(`${refusingUrl}/article/${wallet.address}`, { headers: { 'user-agent': GPTBOT } }),
    ).rejects.toBeInstanceOf(PaymentFailedError);
    expect(kept).toHaveLength(before + 1);
    return { wallet, agent, header: kept[kept.length - 1] };
  }

  /** Two agents refused: one whose authorization the site then settles anyway, one it never uses. */
  let unused: Awaited<ReturnType<typeof refusedAgent>>;
  let settled: Awaited<ReturnType<typeof refusedAgent>>;
  beforeAll(async () => {
    unused = await refusedAgent();
    settled = await refusedAgent();
    // The site settles the second authorization it refused, before it expires.
    const { payload } = decodeBase64Json(settled.header) as {
      payload: { signature: Hex; authorization: Record<string, string> };
    };
    const a = payload.authorization;
    const thief = newWallet();
    await fundEth(gated.app, thief.address);
    const client = createWalletClient({
      account: thief,
      chain: gated.app.chain.relayer.chain,
      transport: http(gated.app.chain.rpcUrl),
    });
    const hash = await client.writeContract({
      address: gated.app.chain.usdc,
      abi: USDC_ABI,
      functionName: 'transferWithAuthorization',
      args: [
        a.from as Hex,
        a.to as Hex,
        BigInt(a.value),
        BigInt(a.validAfter),
        BigInt(a.validBefore),
        a.nonce as Hex,
        payload.signature,
      ],
    });
    const receipt = await gated.app.chain.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(await usdcBalance(gated.app, settled.wallet.address)).toBe(1_000_000n - PRICE);
  });

  it('keeps each refused authorization reserved while it has not expired, used or not', async () => {
    for (const { agent } of [unused, settled]) {
      expect(await agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
      expect(await agent.spending()).toMatchObject({ usd: '0', payments: 0, remainingUsd: '0.04' });
    }
  });

  it('frees an expired one that was never used, once', async () => {
    // The chain's clock moves past every authorization's validBefore (at most 300 s by default), but
    // not yet by the agent's margin against reorgs (60 s): still reserved.
    await increaseTime(gated.app.chain.rpcUrl, 301);
    expect(await unused.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
    await increaseTime(gated.app.chain.rpcUrl, 60);
    expect(await unused.agent.settleRefused()).toEqual({ freed: 1, spent: 0 });
    expect(await unused.agent.spending()).toMatchObject({ usd: '0', payments: 0, remainingUsd: '0.05' });
    expect(await unused.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
    expect(await usdcBalance(gated.app, unused.wallet.address)).toBe(1_000_000n);
  });

  it('counts one the site settled after refusing it as spent, never freed', async () => {
    expect(await settled.agent.settleRefused()).toEqual({ freed: 0, spent: 1 });
    expect(await settled.agent.spending()).toMatchObject({ usd: '0.01', payments: 1, remainingUsd: '0.04' });
    expect(await settled.agent.settleRefused()).toEqual({ freed: 0, spent: 0 });
  });
});
