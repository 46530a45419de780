import { exactPaymentV1 } from '@crawlgate/core';
import { buildAuthorization, simulationAwareWalletAbi, simulationAwareWalletBytecode } from '@crawlgate/devchain';
import { openGate, siteAtPrice, type TestSite } from '../../test/fixtures';
import { holdPoint } from '../../test/hold-point';
import { fundEth, fundUsdc, newWallet, paymentsOfOnePayer, usdcBalance, walletOf } from '../../test/test-agent';
import { startProxiedTestApp, type ProxiedTestApp } from '../../test/proxied-test-app';
import type { TestApp } from '../../test/test-app';
import { ReconcilerService } from './reconciler.service';
import { RelayRefusalsStore } from './relay-refusals.store';

/** The claim age after which the reconciler takes an unsent claim: max(2 s, the settlement timeout). */
const CLAIM_AGE_MS = 2_000;
/** A USDC balanceOf call's selector, inside the one call the coverage check makes on the settlement path. */
const BALANCE_OF = '70a08231';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A request slower than the claim age (CI under load) leaves its claim to the reconciler while it
 * still runs. The reconciler must judge it as the request does: sent only if the payer's USDC, less
 * its other settlements in flight, covers it. It sent a payer's second claim while the first was on
 * its way; that settlement reverted at the relayer's gas, the payer was refused relaying for 24 hours,
 * and the request whose claim it took answered 202 instead of 402 (CI on PostgreSQL caught it once).
 */
describe('the reconciler and the claims of a payer holding enough for one', () => {
  let proxied: ProxiedTestApp;
  let app: TestApp;
  let dear: TestSite;

  beforeAll(async () => {
    // The reconciler runs when this test says so (the tests' default turns its interval off).
    proxied = await startProxiedTestApp({ config: { chain: { settlementTimeoutMs: CLAIM_AGE_MS } } });
    app = proxied.app;
    dear = await siteAtPrice(app, newWallet(), '0.5');
  });
  afterAll(() => proxied.close());

  it('does not send a claim left to it while the payer’s other settlement is on its way', async () => {
    const { agent, verify, relayerSent } = await paymentsOfOnePayer(app, dear, '0.5', ['/slow/0', '/slow/1']);

    // The first settlement's broadcast is held (its request keeps the relayer's broadcast turn);
    // the second request stops at its balance read, its claim written; the reconciler's gas
    // estimate is seen.
    const held = { broadcast: holdPoint(), balance: holdPoint(), estimate: holdPoint() };
    let phase: 'first' | 'second' | 'reconciler' = 'first';
    proxied.onRpc((text) => {
      if (phase === 'first' && text.includes('eth_sendRawTransaction')) return held.broadcast.reach();
      if (phase === 'second' && text.includes(BALANCE_OF)) return held.balance.reach();
      if (phase === 'reconciler' && text.includes('eth_estimateGas')) void held.estimate.reach();
    });

    const first = verify(0);
    await held.broadcast.reached;
    phase = 'second';
    const second = verify(1);
    await held.balance.reached;
    phase = 'reconciler';
    await sleep(CLAIM_AGE_MS + 300);
    const run = app.app.get(ReconcilerService).runOnce();
    // A reconciler that sends the second claim estimates its gas, then waits for the turn the
    // first broadcast holds; one that does not send it finishes its pass.
    await Promise.race([held.estimate.reached, run]);
    held.broadcast.open();
    held.balance.open();
    const answers = await Promise.all([first, second]);
    await run;
    proxied.onRpc(undefined);

    expect(answers.map((a) => a.status)).toEqual([200, 402]);
    expect(answers[1].body.reason).toBe('insufficient_funds');
    expect(await relayerSent()).toBe(1);
    expect(await usdcBalance(app, agent.address)).toBe(0n);
    expect(await app.app.get(RelayRefusalsStore).isRefused(app.chain.chainId, agent.address)).toBe(false);
    expect(await app.database.prisma.payment.count({ where: { payer: agent.address.toLowerCase() } })).toBe(1);
  }, 30_000);
  /*
   * A contract wallet's signature check runs its own code, which can say yes to every check and no on
   * chain: its payments are settled one at a time (a request with another in flight answers 503). The
   * reconciler, taking a claim its request left, must keep that rule too: it sent a contract payer's
   * second claim while the first was on its way, though its balance covered both.
   */
  it('does not send a contract payer’s claim left to it while another of its settlements is on its way', async () => {
    const deployer = newWallet();
    await fundEth(app, deployer.address);
    const deployed = await walletOf(app, deployer).deployContract({
      abi: simulationAwareWalletAbi,
      bytecode: simulationAwareWalletBytecode,
    } as never);
    const wallet = (await app.chain.publicClient.waitForTransactionReceipt({ hash: deployed })).contractAddress!;
    await fundUsdc(app, wallet, '1'); // enough for both
    const gates = await Promise.all(['/wallet/0', '/wallet/1'].map((path) => openGate(app, dear, path)));
    const verify = (i: number) =>
      app.call('POST', `/v1/gates/${gates[i].id}/verify`, {
        body: {
          payment: exactPaymentV1(
            gates[i].accepts[0].network,
            buildAuthorization({
              from: wallet,
              to: gates[i].pay_to,
              value: BigInt(gates[i].amount),
              validForSeconds: 300,
            }),
            `0x${'11'.repeat(65)}`,
          ),
        },
      });
    const relayerNonce = () =>
      app.chain.publicClient.getTransactionCount({ address: app.chain.relayer.account.address, blockTag: 'pending' });
    const sentBefore = await relayerNonce();

    // The first settlement's broadcast is held; the second request stops at its read of the payer's
    // code (made once another claim is ahead of its own, written by then); the reconciler's gas estimate is seen.
    const held = { broadcast: holdPoint(), code: holdPoint(), estimate: holdPoint() };
    let phase: 'first' | 'second' | 'reconciler' = 'first';
    proxied.onRpc((text) => {
      if (phase === 'first' && text.includes('eth_sendRawTransaction')) return held.broadcast.reach();
      if (phase === 'second' && text.includes('eth_getCode')) return held.code.reach();
      if (phase === 'reconciler' && text.includes('eth_estimateGas')) void held.estimate.reach();
    });

    const first = verify(0);
    await held.broadcast.reached;
    phase = 'second';
    const second = verify(1);
    await held.code.reached;
    phase = 'reconciler';
    await sleep(CLAIM_AGE_MS + 300);
    const run = app.app.get(ReconcilerService).runOnce();
    await Promise.race([held.estimate.reached, run]);
    held.broadcast.open();
    held.code.open();
    const answers = await Promise.all([first, second]);
    await run;
    proxied.onRpc(undefined);

    expect({
      statuses: answers.map((a) => a.status),
      second: answers[1].body.detail,
      sent: (await relayerNonce()) - sentBefore,
    }).toEqual({ statuses: [202, 503], second: expect.stringMatching(/one at a time/), sent: 1 });
  }, 30_000);
});
