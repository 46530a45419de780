import { Logger } from '@nestjs/common';
import {
  keccak256,
  parseEther,
  parseTransaction,
  type Hash,
  type Hex,
  type Transaction,
  type TransactionSerializableEIP1559,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChainContext } from './chain-context';
import {
  currentFees,
  isUnderpriced,
  minimumReplacementFee,
  pendingTooLong,
  planFeeBump,
  replacementFees,
} from './fee-bump';

const gwei = (n: number) => BigInt(Math.round(n * 1e9));

describe('re-pricing a stuck relayer transaction', () => {
  const offered = { maxFeePerGas: gwei(2), maxPriorityFeePerGas: gwei(1) };

  it('raises both fees by at least 12.5 %, rounded up (the replacement nodes take)', () => {
    expect(minimumReplacementFee(8n)).toBe(9n);
    expect(minimumReplacementFee(9n)).toBe(11n); // 10.125, up
    expect(minimumReplacementFee(0n)).toBe(0n);
    // The chain asks a little more than offered: the 12.5 % minimum, not the chain's ask, is what is offered.
    const market = { maxFeePerGas: gwei(2.1), maxPriorityFeePerGas: gwei(1) };
    expect(replacementFees(offered, market, gwei(100))).toEqual({
      maxFeePerGas: gwei(2.25),
      maxPriorityFeePerGas: gwei(1.125),
    });
  });

  it('offers what the chain asks when that is more', () => {
    const market = { maxFeePerGas: gwei(30), maxPriorityFeePerGas: gwei(3) };
    expect(replacementFees(offered, market, gwei(100))).toEqual(market);
  });

  it('never offers more than the maximum fee; none at all when the 12.5 % minimum is above it', () => {
    const market = { maxFeePerGas: gwei(30), maxPriorityFeePerGas: gwei(3) };
    // Capped between the minimum and the chain's ask: the most allowed, which nodes still take.
    expect(replacementFees(offered, market, gwei(5))).toEqual({ maxFeePerGas: gwei(5), maxPriorityFeePerGas: gwei(3) });
    expect(replacementFees(offered, market, gwei(2.25))).toEqual({
      maxFeePerGas: gwei(2.25),
      maxPriorityFeePerGas: gwei(2.25),
    });
    // Nothing under it: the transaction waits for the fees to fall rather than burn more.
    expect(replacementFees(offered, market, gwei(2.2))).toBeNull();
  });

  it('is needed only when the next block would take less tip from it than miners ask, or not take it at all', () => {
    const chain = { baseFeePerGas: gwei(0.5), maxPriorityFeePerGas: gwei(1) };
    expect(isUnderpriced(offered, chain)).toBe(false);
    // Its cap leaves less than the tip over a higher base fee; none at all over one above the cap.
    expect(isUnderpriced(offered, { ...chain, baseFeePerGas: gwei(1.5) })).toBe(true);
    expect(isUnderpriced(offered, { ...chain, baseFeePerGas: gwei(3) })).toBe(true);
    // Miners ask a higher tip than its own.
    expect(isUnderpriced(offered, { ...chain, maxPriorityFeePerGas: gwei(1.01) })).toBe(true);
    expect(isUnderpriced(offered, { baseFeePerGas: gwei(0.1), maxPriorityFeePerGas: gwei(0.5) })).toBe(false);
  });

  it('prices the chain as a new transaction would be: a fifth over the base fee, plus the tip', () => {
    expect(currentFees({ baseFeePerGas: gwei(10), maxPriorityFeePerGas: gwei(1) })).toEqual({
      maxFeePerGas: gwei(13),
      maxPriorityFeePerGas: gwei(1),
    });
  });

  it('waits the configured time from the broadcast first', () => {
    const chain = { feeBump: { afterSeconds: 30, maxFeePerGas: gwei(10), urgentMaxFeePerGas: gwei(100) } };
    const sentAt = new Date(1_000_000);
    expect(pendingTooLong(chain, sentAt, 1_000_000 + 29_999)).toBe(false);
    expect(pendingTooLong(chain, sentAt, 1_000_000 + 30_000)).toBe(true);
  });
});

describe('re-pricing only what the relayer itself sent', () => {
  const relayer = privateKeyToAccount(generatePrivateKey());
  const stranger = privateKeyToAccount(generatePrivateKey());
  const attacker = privateKeyToAccount(generatePrivateKey()).address;
  const usdc = privateKeyToAccount(generatePrivateKey()).address;
  const chainId = 31337;
  const call: TransactionSerializableEIP1559 = {
    type: 'eip1559',
    chainId,
    nonce: 7,
    to: usdc,
    data: '0xa9059cbb' as Hex,
    value: 0n,
    gas: 90_000n,
    maxFeePerGas: gwei(2),
    maxPriorityFeePerGas: gwei(1),
  };

  /** A pending transaction as a node answers eth_getTransactionByHash for it. */
  async function pendingAsNodeAnswers(signer = relayer, fields = call): Promise<Transaction> {
    const signed = await signer.signTransaction(fields);
    const parsed = parseTransaction(signed);
    return {
      ...parsed,
      type: 'eip1559',
      hash: keccak256(signed),
      from: signer.address,
      input: parsed.data!,
      value: parsed.value ?? 0n, // a node always answers it; the parser leaves out a zero
      blockNumber: null,
      blockHash: null,
      transactionIndex: null,
    } as unknown as Transaction;
  }

  /** A node that answers `tx` for any hash, under a fee spike that leaves it underpriced. */
  function chainAnswering(tx: Transaction) {
    const publicClient = {
      getTransaction: () => Promise.resolve(tx),
      getBlock: () => Promise.resolve({ baseFeePerGas: gwei(5) }),
      estimateMaxPriorityFeePerGas: () => Promise.resolve(gwei(1)),
    };
    return {
      chainId,
      relayer: { account: relayer },
      publicClient,
      feeBump: { afterSeconds: 0, maxFeePerGas: gwei(100), urgentMaxFeePerGas: gwei(100) },
    } as unknown as ChainContext;
  }

  let warn: jest.SpyInstance;
  beforeEach(() => (warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined)));
  afterEach(() => warn.mockRestore());

  it("replaces the relayer's own pending transaction with the same call", async () => {
    const ours = await pendingAsNodeAnswers();
    const bump = await planFeeBump(chainAnswering(ours), ours.hash);
    expect(bump).toMatchObject({
      kind: 'replace',
      replacement: { nonce: 7, to: usdc.toLowerCase(), data: call.data, value: 0n, gas: call.gas },
    });
    expect(warn).not.toHaveBeenCalled();
  });

  it('signs nothing when the node answers our hash with another call: a node cannot have the relayer send its own', async () => {
    const ours = await pendingAsNodeAnswers();
    const forged = { ...ours, to: attacker, value: parseEther('5'), input: '0xdeadbeef' as Hex };
    expect(await planFeeBump(chainAnswering(forged), ours.hash)).toEqual({ kind: 'not-pending' });
    // Even with no ether moved: the call it answers is not the one that hashes to ours.
    const otherCall = { ...ours, to: attacker };
    expect(await planFeeBump(chainAnswering(otherCall), ours.hash)).toEqual({ kind: 'not-pending' });
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/not the relayer's own/));
  });

  it('signs nothing for a transaction another key signed, whatever sender the node names', async () => {
    const theirs = { ...(await pendingAsNodeAnswers(stranger)), from: relayer.address };
    expect(await planFeeBump(chainAnswering(theirs), theirs.hash)).toEqual({ kind: 'not-pending' });
  });

  it('signs nothing for a transaction that moves ether, even one the relayer signed', async () => {
    const paying = await pendingAsNodeAnswers(relayer, { ...call, to: attacker, value: parseEther('5') });
    expect(await planFeeBump(chainAnswering(paying), paying.hash as Hash)).toEqual({ kind: 'not-pending' });
  });
});
