import { USDC_ABI } from '@crawlgate/core';
import { devTestClient } from '@crawlgate/devchain';
import type { PrivateKeyAccount } from 'viem';
import { openGate, pricedSite, type TestSite } from '../../test/fixtures';
import {
  fundEth,
  fundUsdc,
  newWallet,
  settlementArgs,
  signPayment,
  usdcBalance,
  walletOf,
} from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { ReconcilerService } from './reconciler.service';
import { RelayRefusalsStore } from './relay-refusals.store';

/*
 * A payer whose relayed settlement reverted is not relayed for a day (RelayRefusalsStore): no one
 * but the payer may make that happen. A stranger's copy of its public authorization mined first,
 * or a payee emptying its balance ahead of ours (a write from zero costs more gas than estimated),
 * made ours revert and refused an honest payer.
 */
describe('a revert the payer did not cause', () => {
  let app: TestApp;
  let site: TestSite;
  const payTo = newWallet();
  const payer = newWallet();
  const chain = () => devTestClient(app.chain.rpcUrl);

  beforeAll(async () => {
    // Two confirmations: the reconciler reads the nonce at a head one block behind the newest.
    app = await startTestApp({ isolateChain: true, config: { chain: { confirmations: 2 } } });
    ({ site } = await pricedSite(app, payTo.address));
    await fundUsdc(app, payer.address, '1');
  });
  afterAll(async () => {
    await chain().setAutomine(true);
    await app.close();
  });

  const relayerSent = () =>
    app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
  const fundedWalletOf = async (account: PrivateKeyAccount) => {
    await fundEth(app, account.address);
    return walletOf(app, account);
  };
  /**
   * Verifies `payment` with automine off; `ahead` sends a transaction mined before the relayer's, in
   * one block; `between` runs before the blocks that confirm it.
   */
  async function withOneAhead(
    gate: { id: string },
    payment: unknown,
    ahead: () => Promise<unknown>,
    between: () => Promise<unknown> = async () => undefined,
  ) {
    const before = await relayerSent();
    await chain().setAutomine(false);
    const answer = app.call('POST', `/v1/gates/${gate.id}/verify`, { body: { payment } });
    while ((await relayerSent()) === before) await new Promise((resolve) => setTimeout(resolve, 50));
    await ahead();
    await chain().mine({ blocks: 1 });
    await between();
    await chain().mine({ blocks: 2 });
    await chain().setAutomine(true);
    return answer;
  }
  const tip = { gas: 150_000n, maxPriorityFeePerGas: 50_000_000_000n, maxFeePerGas: 100_000_000_000n };

  it('refuses no payer whose authorization a stranger’s copy settled first, by the request or the reconciler', async () => {
    const gate = await openGate(app, site, '/copied');
    const payment = await signPayment(app, payer, gate);
    const stranger = await fundedWalletOf(newWallet());
    const reconcile = () => app.app.get(ReconcilerService).runOnce();
    const answer = await withOneAhead(
      gate,
      payment,
      () =>
        stranger.writeContract({ address: app.chain.usdc, abi: USDC_ABI, ...settlementArgs(payment), ...tip } as never),
      // While the copy's block is newer than the confirmed head the reconciler reads the nonce at.
      reconcile,
    );
    expect(answer.status).toBe(202);
    expect(await usdcBalance(app, payTo.address)).toBe(10_000n);
    await reconcile();
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, payer.address)).toBe(false);
  }, 60_000);

  it('lets no payee make a settlement run out of gas by emptying its balance ahead of it', async () => {
    // A payer of its own: the first test's payment waits for the copy's hold, and a payer with none
    // settled yet has one settlement in flight at a time.
    const sweptPayer = newWallet();
    await fundUsdc(app, sweptPayer.address, '1');
    const gate = await openGate(app, site, '/swept');
    const payment = await signPayment(app, sweptPayer, gate);
    const payee = await fundedWalletOf(payTo);
    const held = await usdcBalance(app, payTo.address);
    expect(held).toBeGreaterThan(0n);
    const answer = await withOneAhead(gate, payment, () =>
      payee.writeContract({
        address: app.chain.usdc,
        abi: USDC_ABI,
        functionName: 'transfer',
        args: [newWallet().address, held],
        ...tip,
      } as never),
    );
    expect(answer.status === 200 ? 200 : answer).toBe(200);
    expect(await usdcBalance(app, payTo.address)).toBe(10_000n);
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, sweptPayer.address)).toBe(false);
  }, 60_000);
});
