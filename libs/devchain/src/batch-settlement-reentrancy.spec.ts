import { encodeErrorResult, encodeFunctionData, type Address, type Hex } from 'viem';
import { DEV_ROLES } from './accounts';
import { batchSettlementAbi } from './artifacts/batch-settlement';
import { hostileTokenAbi, hostileTokenBytecode } from './artifacts/hostile-token';
import type { ChannelConfig } from './batch-settlement-typed-data';
import {
  channelConfig,
  channelState,
  claimSigned,
  escrowWrite,
  signDeposit,
  startEscrowChain,
  voucherClaim,
  type EscrowChain,
} from './batch-settlement-test-kit';
import { increaseTime } from './chain-control';
import { devWalletClient } from './clients';
import { revertReason } from './test-support';

// A token that calls back into the escrow from inside its own transfer / receiveWithAuthorization,
// i.e. while the escrow is in the middle of a deposit, a settlement or a withdrawal. Channels are
// per token, so such a token can only ever move its own units; what must hold is that its
// callbacks cannot make the escrow pay twice or credit what it did not receive.

const { relayer, agents, spare } = DEV_ROLES;
const payer = agents[0];
const attacker = spare[2];
const REENTRANCY = encodeErrorResult({ abi: batchSettlementAbi, errorName: 'Reentrancy' });

let chain: EscrowChain;
let token: Address;
let config: ChannelConfig;

const tokenWrite = async (functionName: string, args: readonly unknown[]): Promise<void> => {
  const wallet = devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, attacker.account);
  const hash = await wallet.writeContract({ address: token, abi: hostileTokenAbi, functionName, args } as never);
  expect((await chain.client.waitForTransactionReceipt({ hash })).status).toBe('success');
};
const tokenRead = <T>(functionName: string, args: readonly unknown[] = []): Promise<T> =>
  chain.client.readContract({ address: token, abi: hostileTokenAbi, functionName, args } as never) as Promise<T>;
const balance = (account: Address) => tokenRead<bigint>('balanceOf', [account]);
const escrowCall = (functionName: string, args: readonly unknown[]): Hex =>
  encodeFunctionData({ abi: batchSettlementAbi, functionName, args } as never);

/** Arms the token to call the escrow with `data` from inside transfer and/or receiveWithAuthorization. */
const arm = (data: Hex, on: { transfer?: boolean; receive?: boolean }) =>
  tokenWrite('arm', [chain.contracts.escrow, data, on.transfer ?? false, on.receive ?? false]);

/** What the token's last callback into the escrow got back. */
async function lastReentry(): Promise<{ attempts: bigint; succeeded: boolean; result: Hex }> {
  const [attempts, succeeded, result] = await Promise.all([
    tokenRead<bigint>('reentryAttempts'),
    tokenRead<boolean>('lastReentrySucceeded'),
    tokenRead<Hex>('lastReentryResult'),
  ]);
  return { attempts, succeeded, result };
}

beforeAll(async () => {
  chain = await startEscrowChain();
  const wallet = devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, attacker.account);
  const hash = await wallet.deployContract({ abi: hostileTokenAbi, bytecode: hostileTokenBytecode });
  token = (await chain.client.waitForTransactionReceipt({ hash })).contractAddress as Address;
  await tokenWrite('mint', [payer.address, 100_000n]);
  config = channelConfig(chain, { token });
});
afterAll(() => chain?.anvil.stop());

const deposit = async (amount: bigint) =>
  escrowWrite(chain, relayer, 'deposit', [
    config,
    amount,
    chain.contracts.collector,
    await signDeposit(chain, config, amount),
  ]);

it('a callback during the deposit’s pull cannot claim, settle or deposit again', async () => {
  const owed = await voucherClaim(chain, config, 5_000n);
  for (const data of [
    escrowCall('claim', [[owed]]),
    escrowCall('settle', [config.receiver, token]),
    escrowCall('deposit', [config, 1n, chain.contracts.collector, '0x']),
  ]) {
    await arm(data, { receive: true });
    const before = (await lastReentry()).attempts;
    await deposit(10_000n);
    expect(await lastReentry()).toEqual({ attempts: before + 1n, succeeded: false, result: REENTRANCY });
  }
  expect(await channelState(chain, config)).toEqual({ balance: 30_000n, totalClaimed: 0n });
  expect(await balance(chain.contracts.escrow)).toBe(30_000n);
});

it('a callback during settlement’s transfer cannot settle a second time', async () => {
  await arm('0x', {});
  await claimSigned(chain, [await voucherClaim(chain, config, 4_000n)]);
  await arm(escrowCall('settle', [config.receiver, token]), { transfer: true });
  const before = (await lastReentry()).attempts;

  await escrowWrite(chain, attacker, 'settle', [config.receiver, token]);

  expect(await lastReentry()).toEqual({ attempts: before + 1n, succeeded: false, result: REENTRANCY });
  expect(await balance(config.receiver)).toBe(4_000n);
  expect(await balance(chain.contracts.escrow)).toBe(26_000n);
});

it('a callback during a withdrawal’s transfer cannot finalize it a second time', async () => {
  // The payer itself is the attacker here: its token calls back as the payer would.
  await arm('0x', {});
  await escrowWrite(chain, payer, 'initiateWithdraw', [config, 26_000n]);
  await increaseTime(chain.anvil.rpcUrl, config.withdrawDelay);
  await arm(escrowCall('finalizeWithdraw', [config]), { transfer: true });
  const payerBefore = await balance(payer.address);

  await escrowWrite(chain, payer, 'finalizeWithdraw', [config]);

  expect(await lastReentry()).toMatchObject({ succeeded: false, result: REENTRANCY });
  expect(await balance(payer.address)).toBe(payerBefore + 26_000n);
  expect(await balance(chain.contracts.escrow)).toBe(0n);
  expect(await channelState(chain, config)).toEqual({ balance: 4_000n, totalClaimed: 4_000n });
});

it('a token that delivers less than the deposit credits nothing', async () => {
  await arm('0x', {});
  await tokenWrite('mint', [chain.contracts.collector, 10n]); // so the short-changed forward itself succeeds
  await tokenWrite('setShortChange', [true]);
  const fresh = channelConfig(chain, { token });
  const data = await signDeposit(chain, fresh, 1_000n);
  expect(
    await revertReason(escrowWrite(chain, relayer, 'deposit', [fresh, 1_000n, chain.contracts.collector, data])),
  ).toBe('DepositCollectionFailed');
  expect(await channelState(chain, fresh)).toEqual({ balance: 0n, totalClaimed: 0n });
});
