import { BATCH_REASONS, BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { devTestClient } from '@crawlgate/devchain';
import { decodeFunctionData, type Hex } from 'viem';
import { batchSettlementSite } from '../../test/fixtures';
import { fundEth, fundUsdc, newWallet } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';
import { batchGate, testChannel } from '../../test/test-channel';
import { createTestDatabase, type TestDatabase } from '../../test/test-database';
import { ClaimerService } from './claimer.service';
import { endFeeSpike, GWEI, ROUTINE_FEE_CAP } from '../../test/test-chain';

/**
 * Review finding (helper rev383): the claimer now marks a claim's vouchers public only after its fee
 * check, but the claim's calldata (every payer's voucher and the authorizer's ClaimBatch signature)
 * already went to the node in prepareRelayerCall (viem's prepareTransactionRequest: eth_fillTransaction, or eth_estimateGas). A claim refused for fees thus
 * showed its vouchers to the node and left them "private": whoever read that request (the node, its
 * logs) asks the payer's cooperative refund with the payer's voucher, which the API takes as the payer's.
 * Before f0d24d7 the vouchers were marked before the estimate, and such a refund was refused (402
 * refund_payload), as DESIGN/README say ("a refund asked with a public voucher is refused").
 */
describe('a claim refused for fees showed its vouchers to the node in its gas estimate', () => {
  let db: TestDatabase;
  let app: TestApp;
  const PRICE = 10_000n;
  const DEPOSIT = 50_000n;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startTestApp({ database: db.database, isolateChain: true });
  });
  afterAll(async () => {
    await app.close();
    await db.dispose();
  });

  const test = () => devTestClient(app.chain.rpcUrl);
  const nextBaseFee = (wei: bigint) => test().setNextBlockBaseFeePerGas({ baseFeePerGas: wei });
  const verify = (gateId: string, payment: unknown) =>
    app.call('POST', `/v1/gates/${gateId}/verify`, { body: { payment } });

  it('a stranger who read the claim gas estimate request asks no cooperative refund with the voucher it carried', async () => {
    const { site } = await batchSettlementSite(app, newWallet().address);
    const payer = newWallet();
    await fundUsdc(app, payer.address, '1');
    await fundEth(app, payer.address);
    const first = await batchGate(app, site);
    const channel = testChannel(app, payer, first.accepted);
    expect((await verify(first.id, await channel.payment(first, PRICE, { deposit: DEPOSIT }))).status).toBe(200);

    // A fee spike above the relayer's maximum; no withdrawal, so the claim is routine.
    await nextBaseFee(50n * GWEI);
    await test().mine({ blocks: 1 });
    expect((await app.chain.publicClient.estimateFeesPerGas()).maxFeePerGas).toBeGreaterThan(ROUTINE_FEE_CAP);

    // What the node is sent: every JSON-RPC body the API writes on node:http (rpc-fetch.ts).
    const seen: string[] = [];
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const http = require('node:http') as typeof import('node:http');
    const realRequest = http.request;
    const spy = jest.spyOn(http, 'request').mockImplementation(((...args: unknown[]) => {
      const request = (realRequest as (...a: unknown[]) => import('node:http').ClientRequest)(...args);
      const end = request.end.bind(request) as (...a: unknown[]) => import('node:http').ClientRequest;
      (request as unknown as { end: (...a: unknown[]) => unknown }).end = (chunk?: unknown, ...rest: unknown[]) => {
        if (chunk && typeof chunk !== 'function') seen.push(Buffer.from(chunk as Uint8Array).toString());
        return end(chunk, ...rest);
      };
      return request;
    }) as typeof http.request);
    let run;
    try {
      run = await app.app.get(ClaimerService).runOnce({ force: true });
    } finally {
      spy.mockRestore();
    }
    expect(run).toMatchObject({ claims: [], settles: [] }); // refused for fees: nothing sent

    // The node was shown the claim: the payer's voucher for what it was charged, with its signature.
    const estimate = seen
      .filter((body) => /eth_estimateGas|eth_fillTransaction/.test(body))
      .flatMap((body) => [JSON.parse(body)].flat() as { method: string; params: { data?: Hex; input?: Hex }[] }[])
      .find((r) => r.method === 'eth_estimateGas' || r.method === 'eth_fillTransaction');
    // Nothing shown to the node (a claim priced before its estimate): nothing a stranger could send.
    if (!estimate) return;
    const calldata = (estimate!.params[0].data ?? estimate!.params[0].input)!;
    const { functionName, args } = decodeFunctionData({ abi: BATCH_SETTLEMENT_ABI, data: calldata });
    expect(functionName).toBe('claimWithSignature');
    const [claims] = args as unknown as [
      { voucher: { channel: typeof channel.config; maxClaimableAmount: bigint }; signature: Hex }[],
    ];
    expect(claims[0].voucher.maxClaimableAmount).toBe(PRICE);

    // Fees fall. The stranger (not the payer: it signs nothing) asks the payer's refund with that voucher.
    await endFeeSpike(app.chain);
    const gate = await batchGate(app, site);
    const stranger = {
      x402Version: 2,
      accepted: gate.accepted,
      payload: {
        type: 'refund',
        channelConfig: claims[0].voucher.channel,
        voucher: {
          channelId: channel.channelId,
          maxClaimableAmount: claims[0].voucher.maxClaimableAmount.toString(),
          signature: claims[0].signature,
        },
      },
    };
    const answer = await verify(gate.id, stranger);
    // A voucher the node saw is public: it asks nothing back (as before f0d24d7).
    expect(answer.status).toBe(402);
    expect(JSON.stringify(answer.body)).toContain(BATCH_REASONS.refundPayload);
  }, 60_000);
});
