import { siteAtPrice, type TestSite } from '../../test/fixtures';
import { holdPoint } from '../../test/hold-point';
import { newWallet, paymentsOfOnePayer, usdcBalance } from '../../test/test-agent';
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
});
