import { BATCH_SETTLEMENT_ABI } from '@crawlgate/core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeFunctionResult, numberToHex, type Hex } from 'viem';
import { testChainConfig, testChainContext } from '../../test/test-chain';
import { readConfirmedChannel, stricterChannel, type OnChainChannel } from './escrow';

/*
 * The channel state vouchers are judged against: its balance at the configured confirmation depth,
 * what may leave it or has moved it at the latest block, in as few round trips as the node allows.
 */

const HEAD = 100n;
const CHANNEL: Hex = `0x${'ab'.repeat(32)}`;

interface ChannelAt {
  balance: bigint;
  totalClaimed: bigint;
  withdrawal: bigint;
  refundNonce: bigint;
}

/** The escrow multicall's answer for a channel in this state. */
function multicallResult(at: ChannelAt): Hex {
  const abi = BATCH_SETTLEMENT_ABI;
  return encodeFunctionResult({
    abi,
    functionName: 'multicall',
    result: [
      encodeFunctionResult({ abi, functionName: 'channels', result: [at.balance, at.totalClaimed] }),
      encodeFunctionResult({
        abi,
        functionName: 'pendingWithdrawals',
        result: [at.withdrawal, at.withdrawal > 0n ? 1_700_000_000 : 0],
      }),
      encodeFunctionResult({ abi, functionName: 'refundNonce', result: at.refundNonce }),
    ],
  });
}

/** A JSON-RPC node at block HEAD whose channel reads as `byBlock` says; records every HTTP request body. */
async function fakeNode(byBlock: (block: string) => ChannelAt) {
  const requests: any[] = [];
  const answer = (call: any) => ({
    jsonrpc: '2.0',
    id: call.id,
    result: call.method === 'eth_blockNumber' ? numberToHex(HEAD) : multicallResult(byBlock(call.params[1])),
  });
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const parsed = JSON.parse(body);
      requests.push(parsed);
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const settled: ChannelAt = { balance: 50_000n, totalClaimed: 10_000n, withdrawal: 0n, refundNonce: 1n };
/** At the latest block: a deposit of 70,000 (one confirmation), a claim, a withdrawal started, a refund. */
const moved: ChannelAt = { balance: 120_000n, totalClaimed: 20_000n, withdrawal: 30_000n, refundNonce: 2n };

describe('readConfirmedChannel', () => {
  let node: Awaited<ReturnType<typeof fakeNode>>;
  const blocksRead: string[] = [];

  beforeAll(async () => {
    node = await fakeNode((block) => {
      blocksRead.push(block);
      return block === 'latest' ? moved : settled;
    });
  });
  afterAll(() => node.close());
  beforeEach(() => {
    node.requests.length = 0;
    blocksRead.length = 0;
  });

  const contextWith = (confirmations: number) => testChainContext(testChainConfig({ confirmations }), node.url);

  it('reads the latest block alone, in one eth_call, with one confirmation', async () => {
    const chain = contextWith(1);
    const state = await readConfirmedChannel(chain, chain.batchSettlement!, CHANNEL);
    expect(node.requests).toHaveLength(1);
    expect(node.requests[0]).toMatchObject({ method: 'eth_call' });
    expect(blocksRead).toEqual(['latest']);
    expect(state).toMatchObject({ balance: 120_000n, totalClaimed: 20_000n, refundNonce: 2n });
  });

  it('judges the balance at the confirmed block and the rest at the latest, both read in one request', async () => {
    const chain = contextWith(3);
    const state = await readConfirmedChannel(chain, chain.batchSettlement!, CHANNEL);
    // The head first, then both blocks' eth_calls as one JSON-RPC batch.
    expect(node.requests).toHaveLength(2);
    expect(node.requests[0]).toMatchObject({ method: 'eth_blockNumber' });
    expect(Array.isArray(node.requests[1]) && node.requests[1].map((call: any) => call.method)).toEqual([
      'eth_call',
      'eth_call',
    ]);
    expect(blocksRead.sort()).toEqual([numberToHex(HEAD - 2n), 'latest'].sort());
    expect(state).toEqual({
      balance: 50_000n, // the deposit with one confirmation does not count yet
      totalClaimed: 20_000n,
      withdrawal: { amount: 30_000n, initiatedAt: 1_700_000_000 },
      refundNonce: 2n,
    });
  });
});

describe('stricterChannel', () => {
  const channel = (fields: Partial<OnChainChannel>): OnChainChannel => ({
    balance: 0n,
    totalClaimed: 0n,
    withdrawal: null,
    refundNonce: 0n,
    ...fields,
  });

  it('takes the smaller balance, the larger claimed total, pending withdrawal and refund nonce', () => {
    // A withdrawal finalized at the latest block: a smaller balance and no withdrawal left there.
    const confirmed = channel({
      balance: 50_000n,
      totalClaimed: 20_000n,
      withdrawal: { amount: 30_000n, initiatedAt: 1 },
      refundNonce: 3n,
    });
    const latest = channel({ balance: 20_000n, totalClaimed: 10_000n, refundNonce: 2n });
    expect(stricterChannel(confirmed, latest)).toEqual({
      balance: 20_000n,
      totalClaimed: 20_000n,
      withdrawal: { amount: 30_000n, initiatedAt: 1 },
      refundNonce: 3n,
    });
  });
});
