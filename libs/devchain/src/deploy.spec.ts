import { domainSeparator, getContractAddress, type Address, type PublicClient } from 'viem';
import { DEV_ROLES } from './accounts';
import { startAnvil, type AnvilInstance } from './anvil';
import { testUsdcAbi } from './artifacts/test-usdc';
import { increaseTime, mineBlocks, revert, snapshot } from './chain-control';
import { devPublicClient, devWalletClient } from './clients';
import { blacklistTestUsdc, deployTestUsdc, mintTestUsdc, TEST_USDC_ADDRESS, usdcBalance } from './deploy';
import { revertReason } from './test-support';

const { relayer, publisher, agents, spare, deployer } = DEV_ROLES;
const USDC = 1_000_000n;

let anvil: AnvilInstance;
let client: PublicClient;
let usdc: Address;

beforeAll(async () => {
  anvil = await startAnvil();
  client = devPublicClient(anvil.rpcUrl);
  ({ usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId }));
});
afterAll(() => anvil?.stop());

const balance = (account: Address): Promise<bigint> => usdcBalance({ rpcUrl: anvil.rpcUrl, usdc, account });
const walletOf = (who: (typeof DEV_ROLES)['relayer']) => devWalletClient(anvil.rpcUrl, anvil.chainId, who.account);
const read = <F extends 'name' | 'symbol' | 'decimals' | 'version' | 'DOMAIN_SEPARATOR' | 'owner' | 'totalSupply'>(
  functionName: F,
) => client.readContract({ address: usdc, abi: testUsdcAbi, functionName });

describe('deployTestUsdc', () => {
  it("deploys at the deployer's nonce-0 address", async () => {
    expect(usdc).toBe(TEST_USDC_ADDRESS);
    expect(usdc).toBe(getContractAddress({ from: deployer.address, nonce: 0n }));
    expect(await read('owner')).toBe(deployer.address);
  });

  it('looks like USDC: "USD Coin", USDC, 6 decimals, EIP-712 version 2', async () => {
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('decimals')).toBe(6);
    expect(await read('version')).toBe('2');
    expect(await read('DOMAIN_SEPARATOR')).toBe(
      domainSeparator({ domain: { name: 'USD Coin', version: '2', chainId: anvil.chainId, verifyingContract: usdc } }),
    );
  });

  it('reuses the existing contract without sending a transaction', async () => {
    const nonceBefore = await client.getTransactionCount({ address: deployer.address });
    const again = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
    expect(again).toEqual({ rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, usdc });
    expect(await client.getTransactionCount({ address: deployer.address })).toBe(nonceBefore);
  });

  it('refuses to reuse a token with another EIP-712 name, or a wrong chain id', async () => {
    await expect(deployTestUsdc({ rpcUrl: anvil.rpcUrl, name: 'USDC' })).rejects.toThrow(
      /"USD Coin"\/"2", requested "USDC"\/"2"/,
    );
    await expect(deployTestUsdc({ rpcUrl: anvil.rpcUrl, chainId: 1 })).rejects.toThrow(/chain id 31337, expected 1/);
  });

  it('lands at the same address on a fresh chain with another id and name (Base Sepolia look-alike)', async () => {
    const other = await startAnvil({ chainId: 84532 });
    try {
      const deployed = await deployTestUsdc({ rpcUrl: other.rpcUrl, name: 'USDC' });
      expect(deployed).toEqual({ rpcUrl: other.rpcUrl, chainId: 84532, usdc: TEST_USDC_ADDRESS });
      const name = await devPublicClient(other.rpcUrl).readContract({
        address: deployed.usdc,
        abi: testUsdcAbi,
        functionName: 'name',
      });
      expect(name).toBe('USDC');
    } finally {
      await other.stop();
    }
  });

  it('explains a deployer account that was used for something else', async () => {
    const other = await startAnvil();
    try {
      const wallet = devWalletClient(other.rpcUrl, other.chainId, deployer.account);
      const hash = await wallet.sendTransaction({ to: relayer.address, value: 1n });
      await devPublicClient(other.rpcUrl).waitForTransactionReceipt({ hash });
      await expect(deployTestUsdc({ rpcUrl: other.rpcUrl })).rejects.toThrow(/dev account 9 is reserved/);
    } finally {
      await other.stop();
    }
  });
});

describe('minting and ERC-20', () => {
  it('mints to an agent and reports balances in atomic units', async () => {
    const before = await balance(agents[0].address);
    await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: agents[0].address, amount: 25n * USDC });
    expect(await balance(agents[0].address)).toBe(before + 25n * USDC);
  });

  it('only lets the owner and configured minters mint, within their allowance', async () => {
    const mint = (amount: bigint) =>
      walletOf(spare[0]).writeContract({
        address: usdc,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [spare[0].address, amount],
      });
    expect(await revertReason(mint(1n))).toBe('FiatToken: caller is not a minter');

    const hash = await walletOf(deployer).writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'configureMinter',
      args: [spare[0].address, 10n],
    });
    await client.waitForTransactionReceipt({ hash });
    await client.waitForTransactionReceipt({ hash: await mint(10n) });
    expect(await balance(spare[0].address)).toBe(10n);
    expect(await revertReason(mint(1n))).toBe('FiatToken: mint amount exceeds minterAllowance');

    const configure = walletOf(relayer).writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'configureMinter',
      args: [relayer.address, 1n],
    });
    expect(await revertReason(configure)).toBe('Ownable: caller is not the owner');
  });

  it("refuses, as USDC does, any transfer from or to a blacklisted account, and only the blacklister's say", async () => {
    const [sender, target] = [spare[1], spare[2]];
    await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: sender.address, amount: 2n * USDC });
    const send = (from: typeof sender, to: Address) =>
      walletOf(from).writeContract({ address: usdc, abi: testUsdcAbi, functionName: 'transfer', args: [to, 1n] });
    const blacklistBy = (who: typeof sender) =>
      walletOf(who).writeContract({
        address: usdc,
        abi: testUsdcAbi,
        functionName: 'blacklist',
        args: [target.address],
      });
    expect(await revertReason(blacklistBy(sender))).toBe('Blacklistable: caller is not the blacklister');
    // As USDC: its own address is blacklisted from the start, so nothing is sent to the token by mistake.
    expect(await revertReason(send(sender, usdc))).toBe('Blacklistable: account is blacklisted');

    await blacklistTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, account: target.address });
    expect(
      await client.readContract({
        address: usdc,
        abi: testUsdcAbi,
        functionName: 'isBlacklisted',
        args: [target.address],
      }),
    ).toBe(true);
    expect(await revertReason(send(sender, target.address))).toBe('Blacklistable: account is blacklisted');
    expect(await balance(target.address)).toBe(0n);

    await blacklistTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, account: target.address, blacklisted: false });
    await client.waitForTransactionReceipt({ hash: await send(sender, target.address) });
    expect(await balance(target.address)).toBe(1n);
    await blacklistTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, account: target.address });
    expect(await balance(target.address)).toBe(1n); // kept beside the flag, as USDC v2.2 does, and read without it
    expect(await revertReason(send(target, sender.address))).toBe('Blacklistable: account is blacklisted');
  });

  it("transfers, and reverts with USDC's message beyond the balance", async () => {
    await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: agents[1].address, amount: 2n * USDC });
    const send = (amount: bigint) =>
      walletOf(agents[1]).writeContract({
        address: usdc,
        abi: testUsdcAbi,
        functionName: 'transfer',
        args: [publisher.address, amount],
      });
    const before = await balance(publisher.address);
    await client.waitForTransactionReceipt({ hash: await send(USDC) });
    expect(await balance(publisher.address)).toBe(before + USDC);
    expect(await revertReason(send(5n * USDC))).toBe('ERC20: transfer amount exceeds balance');
  });
});

describe('chain controls', () => {
  it('snapshot/revert isolates state; a snapshot id is single-use', async () => {
    const id = await snapshot(anvil.rpcUrl);
    const before = await balance(agents[2].address);
    await mintTestUsdc({ rpcUrl: anvil.rpcUrl, usdc, to: agents[2].address, amount: 7n });
    expect(await balance(agents[2].address)).toBe(before + 7n);
    await revert(anvil.rpcUrl, id);
    expect(await balance(agents[2].address)).toBe(before);
    await expect(revert(anvil.rpcUrl, id)).rejects.toThrow(/unknown or already used snapshot/);
  });

  it('mines blocks and moves the clock', async () => {
    const start = await client.getBlock();
    await mineBlocks(anvil.rpcUrl, 5);
    expect(await client.getBlockNumber()).toBe(start.number + 5n);
    await increaseTime(anvil.rpcUrl, 3_600);
    const later = await client.getBlock();
    expect(later.timestamp - start.timestamp).toBeGreaterThanOrEqual(3_600n);
    await expect(mineBlocks(anvil.rpcUrl, 0)).rejects.toThrow(/cannot mine 0 blocks/);
  });
});
