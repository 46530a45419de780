import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toFunctionSignature, type AbiFunction } from 'viem';
import { testUsdcAbi, testUsdcBytecode, testUsdcSourceSha256 } from './artifacts/test-usdc';
import { testBundlerAbi, testBundlerBytecode, testBundlerSourceSha256 } from './artifacts/test-bundler';
import { testWalletAbi, testWalletBytecode, testWalletSourceSha256 } from './artifacts/test-wallet';
import { batchSettlementAbi, batchSettlementSourceSha256 } from './artifacts/batch-settlement';
import { erc3009DepositCollectorAbi, erc3009DepositCollectorSourceSha256 } from './artifacts/erc3009-deposit-collector';
import { hostileTokenSourceSha256 } from './artifacts/hostile-token';
import {
  simulationAwareWalletAbi,
  simulationAwareWalletBytecode,
  simulationAwareWalletSourceSha256,
} from './artifacts/simulation-aware-wallet';

// Canonical signatures, e.g. "transfer(address,uint256)".
const signatures = (abi: readonly { type: string }[]): string[] =>
  abi.filter((item): item is AbiFunction => item.type === 'function').map((f) => toFunctionSignature(f));

const sourceHash = (file: string): string =>
  createHash('sha256')
    .update(readFileSync(join(__dirname, '../contracts', file), 'utf8'))
    .digest('hex');

describe('TestUSDC artifact', () => {
  it.each([
    // ERC-20
    'name()',
    'symbol()',
    'decimals()',
    'totalSupply()',
    'balanceOf(address)',
    'allowance(address,address)',
    'transfer(address,uint256)',
    'transferFrom(address,address,uint256)',
    'approve(address,uint256)',
    // EIP-712 / EIP-2612
    'version()',
    'DOMAIN_SEPARATOR()',
    'nonces(address)',
    'permit(address,address,uint256,uint256,uint8,bytes32,bytes32)',
    'permit(address,address,uint256,uint256,bytes)',
    // EIP-3009, both signature forms
    'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)',
    'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)',
    'receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)',
    'receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)',
    'cancelAuthorization(address,bytes32,uint8,bytes32,bytes32)',
    'cancelAuthorization(address,bytes32,bytes)',
    'authorizationState(address,bytes32)',
    // minting
    'mint(address,uint256)',
    'burn(uint256)',
    'configureMinter(address,uint256)',
    'removeMinter(address)',
    'isMinter(address)',
    'minterAllowance(address)',
    'owner()',
    // blacklisting
    'blacklister()',
    'isBlacklisted(address)',
    'blacklist(address)',
    'unBlacklist(address)',
    'updateBlacklister(address)',
  ])('has %s', (signature) => {
    expect(signatures(testUsdcAbi)).toContain(signature);
  });

  it('has the EIP-3009 events', () => {
    const events = testUsdcAbi.filter((i) => i.type === 'event').map((e) => e.name);
    expect(events).toEqual(
      expect.arrayContaining(['AuthorizationUsed', 'AuthorizationCanceled', 'Transfer', 'Approval']),
    );
  });

  it('is compiled from the current TestUSDC.sol (else run `node tools/compile-token.mjs`)', () => {
    expect(testUsdcSourceSha256).toBe(sourceHash('TestUSDC.sol'));
    expect(testUsdcBytecode).toMatch(/^0x[0-9a-f]+$/);
  });

  it('has a TestWallet artifact compiled from the current TestWallet.sol', () => {
    expect(testWalletSourceSha256).toBe(sourceHash('TestWallet.sol'));
    expect(testWalletBytecode).toMatch(/^0x[0-9a-f]+$/);
    expect(signatures(testWalletAbi)).toContain('isValidSignature(bytes32,bytes)');
  });

  it('has a TestBundler artifact compiled from the current TestBundler.sol', () => {
    expect(testBundlerSourceSha256).toBe(sourceHash('TestBundler.sol'));
    expect(testBundlerBytecode).toMatch(/^0x[0-9a-f]+$/);
    expect(signatures(testBundlerAbi)).toEqual(['callAll(address[],bytes[])']);
  });

  it('has a SimulationAwareWallet artifact compiled from the current SimulationAwareWallet.sol', () => {
    expect(simulationAwareWalletSourceSha256).toBe(sourceHash('SimulationAwareWallet.sol'));
    expect(simulationAwareWalletBytecode).toMatch(/^0x[0-9a-f]+$/);
    expect(signatures(simulationAwareWalletAbi)).toEqual(['isValidSignature(bytes32,bytes)']);
  });
});

describe('batch-settlement artifacts', () => {
  it('are compiled from the current .sol files (else run `node tools/compile-token.mjs`)', () => {
    expect(batchSettlementSourceSha256).toBe(sourceHash('BatchSettlement.sol'));
    expect(erc3009DepositCollectorSourceSha256).toBe(sourceHash('Erc3009DepositCollector.sol'));
    expect(hostileTokenSourceSha256).toBe(sourceHash('HostileToken.sol'));
  });

  // Every function of the escrow ABI that @x402/evm 2.27 (batch-settlement client and facilitator)
  // encodes or reads, with its exact canonical signature and outputs.
  const CONFIG = '(address,address,address,address,address,uint40,bytes32)';
  const CLAIMS = `((${CONFIG},uint128),bytes,uint128)[]`;
  it.each([
    [`deposit(${CONFIG},uint128,address,bytes)`, ''],
    [`claim(${CLAIMS})`, ''],
    [`claimWithSignature(${CLAIMS},bytes)`, ''],
    ['settle(address,address)', ''],
    [`initiateWithdraw(${CONFIG},uint128)`, ''],
    [`finalizeWithdraw(${CONFIG})`, ''],
    [`refund(${CONFIG},uint128)`, ''],
    [`refundWithSignature(${CONFIG},uint128,uint256,bytes)`, ''],
    ['multicall(bytes[])', 'bytes[]'],
    [`getChannelId(${CONFIG})`, 'bytes32'],
    ['CHANNEL_CONFIG_TYPEHASH()', 'bytes32'],
    ['channels(bytes32)', 'uint128,uint128'],
    ['pendingWithdrawals(bytes32)', 'uint128,uint40'],
    ['receivers(address,address)', 'uint128,uint128'],
    ['getVoucherDigest(bytes32,uint128)', 'bytes32'],
    ['getRefundDigest(bytes32,uint256,uint128)', 'bytes32'],
    ['refundNonce(bytes32)', 'uint256'],
    [`getClaimBatchDigest(${CLAIMS})`, 'bytes32'],
  ])('escrow has %s returning (%s)', (signature, outputs) => {
    const functions = (batchSettlementAbi as readonly { type: string }[]).filter(
      (item): item is AbiFunction => item.type === 'function',
    );
    const fn = functions.find((f) => toFunctionSignature(f).replace(/tuple/g, '') === signature);
    expect(fn).toBeDefined();
    expect(fn!.outputs.map((o) => o.type).join(',')).toBe(outputs);
  });

  it('has the events x402 defines, with x402’s Settled signature', () => {
    const events = batchSettlementAbi.filter((i) => i.type === 'event');
    expect(events.map((e) => e.name).sort()).toEqual([
      'ChannelClosed',
      'ChannelCreated',
      'Claimed',
      'Deposited',
      'Refunded',
      'Settled',
      'WithdrawFinalized',
      'WithdrawInitiated',
    ]);
    const settled = events.find((e) => e.name === 'Settled')!;
    expect(settled.inputs.map((i) => [i.name, i.type, i.indexed])).toEqual([
      ['receiver', 'address', true],
      ['token', 'address', true],
      ['sender', 'address', true],
      ['amount', 'uint128', false],
    ]);
  });

  it('has the collector entry point the escrow calls', () => {
    expect(signatures(erc3009DepositCollectorAbi)).toContain('collect(address,address,uint256,bytes32,bytes)');
  });
});
