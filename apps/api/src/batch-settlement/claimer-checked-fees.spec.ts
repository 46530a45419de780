import { devTestClient } from '@crawlgate/devchain';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { endFeeSpike, GWEI } from '../../test/test-chain';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { ClaimerService } from './claimer.service';

/**
 * Review finding 4 (helper-386): the claimer checked a claim's fees from estimateFeesPerGas (viem:
 * 1.2 × the base fee, plus the tip), marked its vouchers public, then let viem price the call again
 * (prepareRelayerCall: eth_fillTransaction where the node has it; geth fills at twice the base fee).
 * Under a 10 gwei maximum and a base fee of 5 to 8 gwei, the vouchers were published and the claim
 * then refused. Anvil fills lower than viem's estimate, not higher, so here the attack's refusal
 * cannot be shown; what can: the claim sent offers exactly the fees that were checked.
 */
describe('a claim is sent at the fees it was checked at', () => {
  let db: TestDatabase;
  let app: TestApp;
  /** Another instance whose claimer's runs end once they have broadcast: the claim stays pending, on the block its fees were read at. */
  let claiming: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, isolateChain: true });
    claiming = await startTestApp({ database: db.database, config: { chain: { settlementTimeoutMs: 0 } } });
  });
  afterAll(async () => {
    await claiming.app.close();
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  it('offers the maxFeePerGas and tip of estimateFeesPerGas, not what the node would fill in', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const offer = await batchGate(app, site);
    const channel = testChannel(app, payer, offer.accepted);
    expect((await verify(offer.id, await channel.payment(offer, PRICE, { deposit: DEPOSIT }))).status).toBe(200);
    // A base fee of 6 gwei: within the 10 gwei maximum at viem's 1.2 × (8.2 gwei), not at geth's 2 ×.
    await test().setNextBlockBaseFeePerGas({ baseFeePerGas: 6n * GWEI });
    await test().mine({ blocks: 1 });
    await test().setAutomine(false);
    try {
      const checked = await app.chain.publicClient.estimateFeesPerGas();

      const run = await claiming.app.get(ClaimerService).runOnce({ force: true });

      expect(run.claims).toHaveLength(1);
      const sent = await app.chain.publicClient.getTransaction({ hash: run.claims[0] });
      expect(sent.blockNumber).toBeNull();
      // Before the fix: what viem's prepareTransactionRequest took from the node (7.5 gwei on anvil).
      expect({ maxFeePerGas: sent.maxFeePerGas, maxPriorityFeePerGas: sent.maxPriorityFeePerGas }).toEqual({
        maxFeePerGas: checked.maxFeePerGas,
        maxPriorityFeePerGas: checked.maxPriorityFeePerGas,
      });
    } finally {
      await endFeeSpike(app.chain);
    }
  }, 60_000);
});
