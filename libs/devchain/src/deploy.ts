import { getContractAddress, type Address, type Hash, type PublicClient } from 'viem';
import { DEV_ROLES } from './accounts';
import { testUsdcAbi, testUsdcBytecode } from './artifacts/test-usdc';
import { devPublicClient, devWalletClient, DEV_POLLING_INTERVAL_MS } from './clients';

/** USDC's EIP-712 domain on Base mainnet; Base Sepolia's uses the name "USDC". */
export const DEFAULT_USDC_NAME = 'USD Coin';
export const DEFAULT_USDC_VERSION = '2';

export interface DeployTestUsdcOptions {
  rpcUrl: string;
  /** Expected chain id; checked against the node. Absent: read from the node. */
  chainId?: number;
  /** Token name = EIP-712 domain name. Default "USD Coin". */
  name?: string;
  /** EIP-712 domain version. Default "2". */
  version?: string;
}

export interface TestUsdcDeployment {
  rpcUrl: string;
  chainId: number;
  usdc: Address;
}

/** Where TestUSDC lives on every fresh dev chain: the deployer's nonce-0 CREATE address. */
export const TEST_USDC_ADDRESS: Address = getContractAddress({ from: DEV_ROLES.deployer.address, nonce: 0n });

/**
 * Deploys TestUSDC from the dedicated deployer account (dev account 9) at nonce 0, or reuses the
 * contract already there (an API restarting against the same chain). Reuse checks that the
 * existing token has the requested name and version: a wrong EIP-712 name fails every payment.
 */
export async function deployTestUsdc(opts: DeployTestUsdcOptions): Promise<TestUsdcDeployment> {
  const name = opts.name ?? DEFAULT_USDC_NAME;
  const version = opts.version ?? DEFAULT_USDC_VERSION;
  const client = devPublicClient(opts.rpcUrl);
  const chainId = await client.getChainId();
  if (opts.chainId !== undefined && opts.chainId !== chainId) {
    throw new Error(`devchain: ${opts.rpcUrl} has chain id ${chainId}, expected ${opts.chainId}`);
  }
  const result: TestUsdcDeployment = { rpcUrl: opts.rpcUrl, chainId, usdc: TEST_USDC_ADDRESS };

  if (await hasCode(client, TEST_USDC_ADDRESS)) {
    await assertDomain(client, name, version);
    return result;
  }

  const deployer = DEV_ROLES.deployer;
  const [mined, pending] = await Promise.all([
    client.getTransactionCount({ address: deployer.address, blockTag: 'latest' }),
    client.getTransactionCount({ address: deployer.address, blockTag: 'pending' }),
  ]);
  // Nonce 0 still pending (blockTime mode): a concurrent call's deployment is waiting for a block.
  if (mined === 0 && pending > 0 && (await waitForCode(client, TEST_USDC_ADDRESS, 30_000))) {
    await assertDomain(client, name, version);
    return result;
  }
  if (mined > 0 || pending > 0) {
    throw new Error(
      `devchain: deployer ${deployer.address} already sent ${pending} transaction(s) but ${TEST_USDC_ADDRESS} has no code; ` +
        'dev account 9 is reserved for the TestUSDC deployment — start from a fresh chain',
    );
  }

  const wallet = devWalletClient(opts.rpcUrl, chainId, deployer.account);
  const hash = await wallet.deployContract({
    abi: testUsdcAbi,
    bytecode: testUsdcBytecode,
    args: [name, version],
    nonce: 0,
  });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: DEV_POLLING_INTERVAL_MS });
  if (receipt.status !== 'success' || receipt.contractAddress?.toLowerCase() !== TEST_USDC_ADDRESS.toLowerCase()) {
    throw new Error(
      `devchain: TestUSDC deployment ${hash} failed (status ${receipt.status}, address ${receipt.contractAddress})`,
    );
  }
  return result;
}

export interface MintTestUsdcOptions {
  rpcUrl: string;
  usdc: Address;
  to: Address;
  /** Atomic units (6 decimals): 1 USDC = 1_000_000n. */
  amount: bigint;
}

/** Mints as the token owner (the deployer) and waits for the block. Returns the transaction hash. */
export function mintTestUsdc(opts: MintTestUsdcOptions): Promise<Hash> {
  return asTokenOwner(opts, 'mint', [opts.to, opts.amount]);
}

export interface BlacklistTestUsdcOptions {
  rpcUrl: string;
  usdc: Address;
  account: Address;
  /** false: lift the blacklisting. */
  blacklisted?: boolean;
}

/**
 * Blacklists `account` as USDC's blacklister (the deployer here): no transfer from or to it goes
 * through after, as on Base for an address Circle blacklisted. Returns the transaction hash.
 */
export function blacklistTestUsdc(opts: BlacklistTestUsdcOptions): Promise<Hash> {
  return asTokenOwner(opts, opts.blacklisted === false ? 'unBlacklist' : 'blacklist', [opts.account]);
}

/** Calls the token as its owner (the deployer) and waits for the block; a revert throws. */
async function asTokenOwner(
  opts: { rpcUrl: string; usdc: Address },
  functionName: 'mint' | 'blacklist' | 'unBlacklist',
  args: readonly [Address] | readonly [Address, bigint],
): Promise<Hash> {
  const client = devPublicClient(opts.rpcUrl);
  const chainId = await client.getChainId();
  const wallet = devWalletClient(opts.rpcUrl, chainId, DEV_ROLES.deployer.account);
  const hash = await wallet.writeContract({
    address: opts.usdc,
    abi: testUsdcAbi,
    functionName,
    args,
  } as Parameters<typeof wallet.writeContract>[0]);
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: DEV_POLLING_INTERVAL_MS });
  if (receipt.status !== 'success') throw new Error(`devchain: ${functionName} ${hash} reverted`);
  return hash;
}

export interface UsdcBalanceOptions {
  rpcUrl: string;
  usdc: Address;
  account: Address;
}

/** Balance in atomic units. */
export async function usdcBalance(opts: UsdcBalanceOptions): Promise<bigint> {
  return devPublicClient(opts.rpcUrl).readContract({
    address: opts.usdc,
    abi: testUsdcAbi,
    functionName: 'balanceOf',
    args: [opts.account],
  });
}

async function hasCode(client: PublicClient, address: Address): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== '0x';
}

async function waitForCode(client: PublicClient, address: Address, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await hasCode(client, address)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

async function assertDomain(client: PublicClient, name: string, version: string): Promise<void> {
  const [actualName, actualVersion] = await Promise.all([
    client.readContract({ address: TEST_USDC_ADDRESS, abi: testUsdcAbi, functionName: 'name' }),
    client.readContract({ address: TEST_USDC_ADDRESS, abi: testUsdcAbi, functionName: 'version' }),
  ]);
  if (actualName !== name || actualVersion !== version) {
    throw new Error(
      `devchain: TestUSDC at ${TEST_USDC_ADDRESS} has EIP-712 domain "${actualName}"/"${actualVersion}", ` +
        `requested "${name}"/"${version}" — start a fresh chain to change it`,
    );
  }
}
