import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toFunctionSignature, type AbiFunction } from 'viem';
import { testUsdcAbi, testUsdcBytecode, testUsdcSourceSha256 } from './artifacts/test-usdc';
import { testWalletAbi, testWalletBytecode, testWalletSourceSha256 } from './artifacts/test-wallet';

// Canonical signatures, e.g. "transfer(address,uint256)".
const signatures = (abi: readonly { type: string }[]): string[] =>
  abi.filter((item): item is AbiFunction => item.type === 'function').map((f) => toFunctionSignature(f));

const sourceHash = (file: string): string =>
  createHash('sha256').update(readFileSync(join(__dirname, '../contracts', file), 'utf8')).digest('hex');

describe('TestUSDC artifact', () => {
  it.each([
    // ERC-20
    'name()', 'symbol()', 'decimals()', 'totalSupply()', 'balanceOf(address)', 'allowance(address,address)',
    'transfer(address,uint256)', 'transferFrom(address,address,uint256)', 'approve(address,uint256)',
    // EIP-712 / EIP-2612
    'version()', 'DOMAIN_SEPARATOR()', 'nonces(address)',
    'permit(address,address,uint256,uint256,uint8,bytes32,bytes32)', 'permit(address,address,uint256,uint256,bytes)',
    // EIP-3009, both signature forms
    'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)',
    'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)',
    'receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)',
    'receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)',
    'cancelAuthorization(address,bytes32,uint8,bytes32,bytes32)', 'cancelAuthorization(address,bytes32,bytes)',
    'authorizationState(address,bytes32)',
    // minting
    'mint(address,uint256)', 'burn(uint256)', 'configureMinter(address,uint256)', 'removeMinter(address)',
    'isMinter(address)', 'minterAllowance(address)', 'owner()',
  ])('has %s', (signature) => {
    expect(signatures(testUsdcAbi)).toContain(signature);
  });

  it('has the EIP-3009 events', () => {
    const events = testUsdcAbi.filter((i) => i.type === 'event').map((e) => e.name);
    expect(events).toEqual(expect.arrayContaining(['AuthorizationUsed', 'AuthorizationCanceled', 'Transfer', 'Approval']));
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
});
