import { encodeFunctionData, parseEventLogs, type Address, type Hex, type TransactionReceipt } from 'viem';
import { DEV_ROLES } from './accounts';
import { batchSettlementAbi } from './artifacts/batch-settlement';
import { erc3009DepositCollectorAbi } from './artifacts/erc3009-deposit-collector';
import { testWalletAbi, testWalletBytecode } from './artifacts/test-wallet';
import { channelIdOf, signClaimBatch, signRefund, type ChannelConfig } from './batch-settlement-typed-data';
import {
  balanceOf,
  channelConfig,
  channelState,
  claimSigned,
  depositInto,
  escrowRead,
  escrowWrite,
  highSTwin,
  mint,
  randomSalt,
  signDeposit,
  receiverAuthorizer,
  startEscrowChain,
  voucherClaim,
  USDC,
  type EscrowChain,
} from './batch-settlement-test-kit';
import { increaseTime } from './chain-control';
import { devTestClient, devWalletClient } from './clients';
import { revertReason } from './test-support';

// The escrow on a real anvil chain, placed at x402's address: every scenario is a real transaction.

const { relayer, publisher, agents, spare } = DEV_ROLES;
const [payer, otherAgent, walletOwner] = agents;
const stranger = spare[2];

let chain: EscrowChain;

beforeAll(async () => {
  chain = await startEscrowChain();
  await mint(chain, payer.address, 1_000n * USDC);
});
afterAll(() => chain?.anvil.stop());

const idOf = (config: ChannelConfig): Hex => channelIdOf(chain.domain, config);
const settle = (receiver: Address) => escrowWrite(chain, stranger, 'settle', [receiver, chain.usdc]);
const eventsOf = (receipt: TransactionReceipt) => parseEventLogs({ abi: batchSettlementAbi, logs: receipt.logs });

/** A channel with `amount` deposited. */
async function openChannel(amount: bigint, overrides: Partial<ChannelConfig> = {}): Promise<ChannelConfig> {
  const config = channelConfig(chain, overrides);
  await depositInto(chain, config, amount);
  return config;
}

describe('deposit', () => {
  it('credits the channel named by the EIP-712 hash of its config and moves the payer’s tokens into escrow', async () => {
    const config = channelConfig(chain);
    const [payerBefore, escrowBefore] = await Promise.all([
      balanceOf(chain, payer.address),
      balanceOf(chain, chain.contracts.escrow),
    ]);

    const receipt = await depositInto(chain, config, 5n * USDC);

    expect(await escrowRead(chain, 'getChannelId', [config])).toBe(idOf(config));
    expect(await channelState(chain, config)).toEqual({ balance: 5n * USDC, totalClaimed: 0n });
    expect(await balanceOf(chain, payer.address)).toBe(payerBefore - 5n * USDC);
    expect(await balanceOf(chain, chain.contracts.escrow)).toBe(escrowBefore + 5n * USDC);
    expect(await balanceOf(chain, chain.contracts.collector)).toBe(0n);
    const events = eventsOf(receipt);
    expect(events.map((e) => e.eventName)).toEqual(['ChannelCreated', 'Deposited']);
    expect(events[1].args).toEqual({
      channelId: idOf(config),
      sender: relayer.address,
      amount: 5n * USDC,
      newBalance: 5n * USDC,
    });

    const topUp = await depositInto(chain, config, 2n * USDC);
    expect(eventsOf(topUp).map((e) => e.eventName)).toEqual(['Deposited']);
    expect((await channelState(chain, config)).balance).toBe(7n * USDC);
  });

  it('refuses a payer’s authorization replayed, or carried into a channel it was not signed for', async () => {
    const config = channelConfig(chain);
    const data = await signDeposit(chain, config, USDC);
    // Same signature, another receiver: the nonce binds it to the original channel id.
    const hijacked = { ...config, receiver: stranger.address };
    expect(
      await revertReason(escrowWrite(chain, relayer, 'deposit', [hijacked, USDC, chain.contracts.collector, data])),
    ).toBe('FiatTokenV2: invalid signature');
    expect(
      await revertReason(escrowWrite(chain, relayer, 'deposit', [config, 2n * USDC, chain.contracts.collector, data])),
    ).toBe('FiatTokenV2: invalid signature');
    await escrowWrite(chain, relayer, 'deposit', [config, USDC, chain.contracts.collector, data]);
    expect(
      await revertReason(escrowWrite(chain, relayer, 'deposit', [config, USDC, chain.contracts.collector, data])),
    ).toBe('FiatTokenV2: authorization is used or canceled');
    expect(await channelState(chain, config)).toEqual({ balance: USDC, totalClaimed: 0n });
  });

  it('lets only the escrow drive the collector (a published authorization cannot be pulled elsewhere)', async () => {
    const config = channelConfig(chain);
    const data = await signDeposit(chain, config, USDC);
    const wallet = devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, stranger.account);
    const attempt = wallet.writeContract({
      address: chain.contracts.collector,
      abi: erc3009DepositCollectorAbi,
      functionName: 'collect',
      args: [payer.address, chain.usdc, USDC, idOf(config), data],
    });
    expect(await revertReason(attempt)).toBe('NotEscrow');
  });

  it('refuses configs x402 forbids: zero parties or token, a delay outside 15 min – 30 days, zero amounts, no collector', async () => {
    const zero = '0x0000000000000000000000000000000000000000' as const;
    const attempt = (config: ChannelConfig, amount = USDC, collector: Address = chain.contracts.collector) =>
      revertReason(escrowWrite(chain, relayer, 'deposit', [config, amount, collector, '0x']));
    expect(await attempt(channelConfig(chain, { payer: zero }))).toBe('InvalidChannel');
    expect(await attempt(channelConfig(chain, { receiver: zero }))).toBe('InvalidChannel');
    expect(await attempt(channelConfig(chain, { receiverAuthorizer: zero }))).toBe('InvalidChannel');
    expect(await attempt(channelConfig(chain, { token: zero }))).toBe('InvalidChannel');
    expect(await attempt(channelConfig(chain, { withdrawDelay: 899 }))).toBe('WithdrawDelayOutOfRange');
    expect(await attempt(channelConfig(chain, { withdrawDelay: 2_592_001 }))).toBe('WithdrawDelayOutOfRange');
    expect(await attempt(channelConfig(chain), 0n)).toBe('ZeroDeposit');
    expect(await attempt(channelConfig(chain), USDC, zero)).toBe('InvalidCollector');
    expect(await attempt(channelConfig(chain), USDC, stranger.address)).toBe('InvalidCollector'); // no code
  });
});

describe('claim and settle', () => {
  it('pays the receiver exactly the highest voucher claimed; a replayed or lower voucher moves nothing', async () => {
    const config = await openChannel(10_000n);
    const vouchers = await Promise.all([1_000n, 2_000n, 3_000n].map((max) => voucherClaim(chain, config, max)));

    const first = await claimSigned(chain, [vouchers[2]]);
    expect(eventsOf(first).map((e) => [e.eventName, (e.args as { claimAmount?: bigint }).claimAmount])).toEqual([
      ['Claimed', 3_000n],
    ]);
    expect(await channelState(chain, config)).toEqual({ balance: 10_000n, totalClaimed: 3_000n });

    // The same voucher again, and older (lower) ones: recorded already, no event, no value.
    for (const replay of [vouchers[2], vouchers[1], vouchers[0]]) {
      const receipt = await claimSigned(chain, [replay]);
      expect(eventsOf(receipt)).toEqual([]);
    }
    expect(await channelState(chain, config)).toEqual({ balance: 10_000n, totalClaimed: 3_000n });

    const before = await balanceOf(chain, config.receiver);
    const settled = await settle(config.receiver);
    expect(eventsOf(settled)[0].args).toEqual({
      receiver: config.receiver,
      token: chain.usdc,
      sender: stranger.address,
      amount: 3_000n,
    });
    expect(await balanceOf(chain, config.receiver)).toBe(before + 3_000n);
    // Settled once: a second sweep, and a replayed claim, move nothing.
    await claimSigned(chain, [vouchers[2]]);
    await settle(config.receiver);
    expect(await balanceOf(chain, config.receiver)).toBe(before + 3_000n);
    const [totalClaimed, totalSettled] = await escrowRead<[bigint, bigint]>(chain, 'receivers', [
      config.receiver,
      chain.usdc,
    ]);
    expect(totalSettled).toBe(totalClaimed);
  });

  it('counts a voucher once when two relays claim it in the same block', async () => {
    const config = await openChannel(10_000n);
    const row = await voucherClaim(chain, config, 2_500n);
    const signature = await signClaimBatch(receiverAuthorizer.account, chain.domain, [row]);
    const test = devTestClient(chain.anvil.rpcUrl);
    await test.setAutomine(false);
    try {
      const hashes = await Promise.all(
        [relayer, stranger].map((sender) =>
          devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, sender.account).writeContract({
            address: chain.contracts.escrow,
            abi: batchSettlementAbi,
            functionName: 'claimWithSignature',
            args: [[row], signature],
            gas: 500_000n,
          }),
        ),
      );
      await test.mine({ blocks: 1 });
      const receipts = await Promise.all(hashes.map((hash) => chain.client.waitForTransactionReceipt({ hash })));
      expect(receipts[0].blockNumber).toBe(receipts[1].blockNumber);
      expect(receipts.map((r) => r.status)).toEqual(['success', 'success']);
      expect(receipts.flatMap((r) => eventsOf(r)).filter((e) => e.eventName === 'Claimed')).toHaveLength(1);
    } finally {
      await test.setAutomine(true);
    }
    expect(await channelState(chain, config)).toEqual({ balance: 10_000n, totalClaimed: 2_500n });
    await settle(config.receiver);
    expect(await balanceOf(chain, config.receiver)).toBe(2_500n);
  });

  it('refuses a claim above the voucher’s signed ceiling (a lower voucher stretched to a higher total)', async () => {
    const config = await openChannel(10_000n);
    const low = await voucherClaim(chain, config, 2_000n, 2_500n);
    expect(await revertReason(claimSigned(chain, [low]))).toBe('ClaimExceedsCeiling');
    expect((await channelState(chain, config)).totalClaimed).toBe(0n);
  });

  it('refuses a claim above the deposit, even with a voucher signed for more', async () => {
    const config = await openChannel(10_000n);
    const greedy = await voucherClaim(chain, config, 50_000n, 10_001n);
    expect(await revertReason(claimSigned(chain, [greedy]))).toBe('ClaimExceedsBalance');
    await claimSigned(chain, [await voucherClaim(chain, config, 50_000n, 10_000n)]);
    expect(await channelState(chain, config)).toEqual({ balance: 10_000n, totalClaimed: 10_000n });
  });

  it('claims many channels in one transaction, all or nothing', async () => {
    const configs = [await openChannel(4_000n), await openChannel(4_000n), await openChannel(4_000n)]; // one relayer: one at a time
    const rows = await Promise.all(configs.map((c, i) => voucherClaim(chain, c, BigInt(1_000 * (i + 1)))));
    const bad = await voucherClaim(chain, configs[0], 9_000n); // above its channel's balance
    expect(await revertReason(claimSigned(chain, [...rows, bad]))).toBe('ClaimExceedsBalance');
    for (const c of configs) expect((await channelState(chain, c)).totalClaimed).toBe(0n);

    const receipt = await claimSigned(chain, rows);
    expect(eventsOf(receipt).filter((e) => e.eventName === 'Claimed')).toHaveLength(3);
    expect(await Promise.all(configs.map(async (c) => (await channelState(chain, c)).totalClaimed))).toEqual([
      1_000n,
      2_000n,
      3_000n,
    ]);
  });

  it('refuses vouchers not signed by the payer authorizer and batches not signed by the receiver authorizer', async () => {
    const config = await openChannel(10_000n, { receiver: publisher.address });
    const forgedVoucher = await voucherClaim(chain, config, 1_000n, 1_000n, otherAgent.account);
    expect(await revertReason(claimSigned(chain, [forgedVoucher]))).toBe('InvalidSignature');

    const good = await voucherClaim(chain, config, 1_000n);
    expect(await revertReason(claimSigned(chain, [good], stranger.account))).toBe('InvalidSignature');
    // A receiver-side signature over one batch cannot authorize another.
    const sigForOther = await signClaimBatch(receiverAuthorizer.account, chain.domain, [
      { ...good, totalClaimed: 500n },
    ]);
    expect(await revertReason(escrowWrite(chain, relayer, 'claimWithSignature', [[good], sigForOther]))).toBe(
      'InvalidSignature',
    );

    // Rows under different receiver authorizers cannot share one signature.
    const foreign = await openChannel(1_000n, { receiverAuthorizer: stranger.address });
    expect(await revertReason(claimSigned(chain, [good, await voucherClaim(chain, foreign, 500n)]))).toBe(
      'NotReceiverAuthorizer',
    );

    // Direct `claim` only from the channel's receiver or receiver authorizer.
    expect(await revertReason(escrowWrite(chain, stranger, 'claim', [[good]]))).toBe('NotAuthorizedToClaim');
    expect(await revertReason(escrowWrite(chain, relayer, 'claim', [[]]))).toBe('EmptyBatch');
    await escrowWrite(chain, publisher, 'claim', [[good]]);
    expect((await channelState(chain, config)).totalClaimed).toBe(1_000n);
  });

  it('refuses the malleable high-s twin of a valid voucher or claim-batch signature', async () => {
    const config = await openChannel(10_000n);
    const row = await voucherClaim(chain, config, 1_000n);
    expect(await revertReason(claimSigned(chain, [{ ...row, signature: highSTwin(row.signature) }]))).toBe(
      'InvalidSignature',
    );

    const batchSig = await signClaimBatch(receiverAuthorizer.account, chain.domain, [row]);
    expect(await revertReason(escrowWrite(chain, relayer, 'claimWithSignature', [[row], highSTwin(batchSig)]))).toBe(
      'InvalidSignature',
    );
    // Truncated signatures too.
    expect(
      await revertReason(escrowWrite(chain, relayer, 'claimWithSignature', [[row], batchSig.slice(0, 130) as Hex])),
    ).toBe('InvalidSignature');

    await escrowWrite(chain, relayer, 'claimWithSignature', [[row], batchSig]); // the low-s originals pass
    expect((await channelState(chain, config)).totalClaimed).toBe(1_000n);
  });

  it('accepts vouchers of a smart-wallet payer (payerAuthorizer zero) through ERC-1271 only', async () => {
    const ownerWallet = devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, walletOwner.account);
    const hash = await ownerWallet.deployContract({
      abi: testWalletAbi,
      bytecode: testWalletBytecode,
      args: [walletOwner.address],
    });
    const wallet = (await chain.client.waitForTransactionReceipt({ hash })).contractAddress as Address;
    await mint(chain, wallet, 10n * USDC);
    const zero = '0x0000000000000000000000000000000000000000' as const;
    const config = channelConfig(chain, { payer: wallet, payerAuthorizer: zero });
    // The owner's key signs for the wallet, as TestWallet's isValidSignature checks.
    const data = await signDeposit(chain, config, USDC, walletOwner.account);
    await escrowWrite(chain, relayer, 'deposit', [config, USDC, chain.contracts.collector, data]);

    expect(
      await revertReason(claimSigned(chain, [await voucherClaim(chain, config, 1_000n, 1_000n, otherAgent.account)])),
    ).toBe('InvalidSignature');
    await claimSigned(chain, [await voucherClaim(chain, config, 1_000n, 1_000n, walletOwner.account)]);
    expect((await channelState(chain, config)).totalClaimed).toBe(1_000n);
  });

  it('runs claim and settle in one multicall; a failing call undoes the whole transaction', async () => {
    const config = await openChannel(10_000n);
    const row = await voucherClaim(chain, config, 4_000n);
    const claimCall = encodeFunctionData({
      abi: batchSettlementAbi,
      functionName: 'claimWithSignature',
      args: [[row], await signClaimBatch(receiverAuthorizer.account, chain.domain, [row])],
    });
    const settleCall = encodeFunctionData({
      abi: batchSettlementAbi,
      functionName: 'settle',
      args: [config.receiver, chain.usdc],
    });
    const refundCall = encodeFunctionData({ abi: batchSettlementAbi, functionName: 'refund', args: [config, 1n] }); // stranger may not

    expect(await revertReason(escrowWrite(chain, stranger, 'multicall', [[claimCall, refundCall]]))).toBe(
      'NotAuthorizedToRefund',
    );
    expect((await channelState(chain, config)).totalClaimed).toBe(0n);

    const before = await balanceOf(chain, config.receiver);
    await escrowWrite(chain, stranger, 'multicall', [[claimCall, settleCall]]);
    expect(await balanceOf(chain, config.receiver)).toBe(before + 4_000n);
  });
});

describe('timed withdrawal', () => {
  it('is started only by the payer side, for at most the unclaimed escrow, once at a time', async () => {
    const config = await openChannel(10_000n);
    await claimSigned(chain, [await voucherClaim(chain, config, 3_000n)]);
    expect(await revertReason(escrowWrite(chain, stranger, 'initiateWithdraw', [config, 1n]))).toBe(
      'NotAuthorizedToWithdraw',
    );
    expect(await revertReason(escrowWrite(chain, payer, 'initiateWithdraw', [config, 0n]))).toBe('NothingToWithdraw');
    expect(await revertReason(escrowWrite(chain, payer, 'initiateWithdraw', [config, 7_001n]))).toBe(
      'WithdrawAmountExceedsAvailable',
    );
    const receipt = await escrowWrite(chain, payer, 'initiateWithdraw', [config, 7_000n]);
    const { timestamp } = await chain.client.getBlock({ blockNumber: receipt.blockNumber });
    expect(eventsOf(receipt)[0].args).toEqual({
      channelId: idOf(config),
      amount: 7_000n,
      finalizeAfter: Number(timestamp) + 900,
    });
    expect(await revertReason(escrowWrite(chain, payer, 'initiateWithdraw', [config, 1n]))).toBe(
      'WithdrawalAlreadyPending',
    );
  });

  it('refuses to finalize before the channel’s delay has passed, then pays the payer', async () => {
    const config = await openChannel(10_000n, { withdrawDelay: 3_600 });
    expect(await revertReason(escrowWrite(chain, payer, 'finalizeWithdraw', [config]))).toBe('WithdrawalNotPending');
    await escrowWrite(chain, payer, 'initiateWithdraw', [config, 10_000n]);
    expect(await revertReason(escrowWrite(chain, payer, 'finalizeWithdraw', [config]))).toBe('WithdrawDelayNotElapsed');
    await increaseTime(chain.anvil.rpcUrl, 3_500);
    expect(await revertReason(escrowWrite(chain, payer, 'finalizeWithdraw', [config]))).toBe('WithdrawDelayNotElapsed');
    expect(await revertReason(escrowWrite(chain, stranger, 'finalizeWithdraw', [config]))).toBe(
      'NotAuthorizedToWithdraw',
    );

    await increaseTime(chain.anvil.rpcUrl, 100);
    const before = await balanceOf(chain, payer.address);
    const receipt = await escrowWrite(chain, payer, 'finalizeWithdraw', [config]);
    expect(await balanceOf(chain, payer.address)).toBe(before + 10_000n);
    expect(eventsOf(receipt).map((e) => e.eventName)).toEqual(['WithdrawFinalized', 'ChannelClosed']);
    expect(await channelState(chain, config)).toEqual({ balance: 0n, totalClaimed: 0n });
  });

  it('a claim racing a withdrawal: the receiver claims within the delay and the payer leaves with only the rest', async () => {
    const config = await openChannel(10_000n);
    const owed = await voucherClaim(chain, config, 4_000n); // served, not yet claimed
    // The payer tries to walk away with everything, vouchers outstanding.
    await escrowWrite(chain, payer, 'initiateWithdraw', [config, 10_000n]);
    await increaseTime(chain.anvil.rpcUrl, 600);
    await claimSigned(chain, [owed]); // inside the window

    await increaseTime(chain.anvil.rpcUrl, 300);
    const [payerBefore, receiverBefore] = await Promise.all([
      balanceOf(chain, payer.address),
      balanceOf(chain, config.receiver),
    ]);
    const receipt = await escrowWrite(chain, payer, 'finalizeWithdraw', [config]);
    expect(eventsOf(receipt)[0].args).toMatchObject({ amount: 6_000n });
    await settle(config.receiver);
    expect(await balanceOf(chain, payer.address)).toBe(payerBefore + 6_000n);
    expect(await balanceOf(chain, config.receiver)).toBe(receiverBefore + 4_000n);
    expect(await channelState(chain, config)).toEqual({ balance: 4_000n, totalClaimed: 4_000n });

    // A later voucher finds nothing left: the escrow never pays out more than was deposited.
    expect(await revertReason(claimSigned(chain, [await voucherClaim(chain, config, 5_000n)]))).toBe(
      'ClaimExceedsBalance',
    );
  });

  it('a receiver that misses the window loses the unclaimed vouchers (the delay is its claim deadline)', async () => {
    const config = await openChannel(10_000n);
    const late = await voucherClaim(chain, config, 4_000n);
    await escrowWrite(chain, payer, 'initiateWithdraw', [config, 10_000n]);
    await increaseTime(chain.anvil.rpcUrl, 900);
    await escrowWrite(chain, payer, 'finalizeWithdraw', [config]);
    expect(await revertReason(claimSigned(chain, [late]))).toBe('ClaimExceedsBalance');
  });
});

describe('cooperative refund', () => {
  it('returns unclaimed escrow to the payer, at most what is unclaimed, and shrinks a pending withdrawal', async () => {
    const config = await openChannel(10_000n, { receiver: publisher.address });
    await claimSigned(chain, [await voucherClaim(chain, config, 3_000n)]);
    await escrowWrite(chain, payer, 'initiateWithdraw', [config, 7_000n]);
    expect(await revertReason(escrowWrite(chain, stranger, 'refund', [config, 1_000n]))).toBe('NotAuthorizedToRefund');
    expect(await revertReason(escrowWrite(chain, publisher, 'refund', [config, 0n]))).toBe('ZeroRefund');

    const before = await balanceOf(chain, payer.address);
    await escrowWrite(chain, publisher, 'refund', [config, 2_000n]);
    expect(await balanceOf(chain, payer.address)).toBe(before + 2_000n);
    expect(await escrowRead(chain, 'pendingWithdrawals', [idOf(config)])).toEqual([5_000n, expect.any(Number)]);

    await escrowWrite(chain, receiverAuthorizer, 'refund', [config, 99_999n]); // capped to the 5,000 unclaimed
    expect(await balanceOf(chain, payer.address)).toBe(before + 7_000n);
    expect(await channelState(chain, config)).toEqual({ balance: 3_000n, totalClaimed: 3_000n });
    expect(await escrowRead(chain, 'pendingWithdrawals', [idOf(config)])).toEqual([0n, 0]);
    expect(await escrowRead(chain, 'refundNonce', [idOf(config)])).toBe(2n);
  });

  it('relays a signed refund once: the nonce makes the same signature useless a second time', async () => {
    const config = await openChannel(10_000n);
    const id = idOf(config);
    const nonce = await escrowRead<bigint>(chain, 'refundNonce', [id]);
    const signature = await signRefund(receiverAuthorizer.account, chain.domain, id, nonce, 1_000n);
    expect(
      await revertReason(escrowWrite(chain, stranger, 'refundWithSignature', [config, 2_000n, nonce, signature])),
    ).toBe('InvalidSignature');
    expect(
      await revertReason(
        escrowWrite(chain, stranger, 'refundWithSignature', [config, 1_000n, nonce, highSTwin(signature)]),
      ),
    ).toBe('InvalidSignature');
    const forged = await signRefund(payer.account, chain.domain, id, nonce, 1_000n);
    expect(
      await revertReason(escrowWrite(chain, stranger, 'refundWithSignature', [config, 1_000n, nonce, forged])),
    ).toBe('InvalidSignature');

    await escrowWrite(chain, stranger, 'refundWithSignature', [config, 1_000n, nonce, signature]);
    expect(
      await revertReason(escrowWrite(chain, stranger, 'refundWithSignature', [config, 1_000n, nonce, signature])),
    ).toBe('InvalidRefundNonce');
    expect((await channelState(chain, config)).balance).toBe(9_000n);
  });
});

describe('domain and salt', () => {
  it('binds channel ids to chain and address: the same config under another domain is another channel', async () => {
    const config = channelConfig(chain, { salt: randomSalt() });
    const elsewhere = channelIdOf({ ...chain.domain, verifyingContract: stranger.address }, config);
    expect(elsewhere).not.toBe(idOf(config));
    expect(channelIdOf({ ...chain.domain, chainId: 8453 }, config)).not.toBe(idOf(config));
    expect(await escrowRead(chain, 'DOMAIN_SEPARATOR', [])).toMatch(/^0x[0-9a-f]{64}$/);
    const [, name, version, chainId, verifyingContract] = await escrowRead<[Hex, string, string, bigint, Address]>(
      chain,
      'eip712Domain',
      [],
    );
    expect({ name, version, chainId, verifyingContract }).toEqual({
      name: 'x402 Batch Settlement',
      version: '1',
      chainId: BigInt(chain.anvil.chainId),
      verifyingContract: chain.contracts.escrow,
    });
  });
});
