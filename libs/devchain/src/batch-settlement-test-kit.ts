// Shared by the batch-settlement specs (not exported from the package): a chain with TestUSDC and
// the escrow placed at x402's address, and the few calls every scenario makes.
import { randomBytes } from 'node:crypto';
import {
  toHex,
  type Address,
  type Hash,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEV_ROLES, type DevAccount } from './accounts';
import { startAnvil, type AnvilInstance } from './anvil';
import { batchSettlementAbi } from './artifacts/batch-settlement';
import { usdcDomain, type UsdcDomain } from './authorization';
import { placeBatchSettlement, type BatchSettlementDeployment } from './batch-settlement-deploy';
import {
  batchSettlementDomain,
  channelIdOf,
  erc3009CollectorData,
  signClaimBatch,
  signErc3009Deposit,
  signVoucher,
  type BatchSettlementDomain,
  type ChannelConfig,
  type VoucherClaim,
} from './batch-settlement-typed-data';
import { devPublicClient, devWalletClient } from './clients';
import { deployTestUsdc, mintTestUsdc, usdcBalance } from './deploy';

export const USDC = 1_000_000n;
/** secp256k1 group order, to build the high-s twin of a valid signature. */
export const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

export interface EscrowChain {
  anvil: AnvilInstance;
  client: PublicClient;
  usdc: Address;
  tokenDomain: UsdcDomain;
  contracts: BatchSettlementDeployment;
  domain: BatchSettlementDomain;
}

export async function startEscrowChain(): Promise<EscrowChain> {
  const anvil = await startAnvil();
  const client = devPublicClient(anvil.rpcUrl);
  const { usdc } = await deployTestUsdc({ rpcUrl: anvil.rpcUrl });
  const contracts = await placeBatchSettlement({ rpcUrl: anvil.rpcUrl });
  return {
    anvil,
    client,
    usdc,
    tokenDomain: usdcDomain(anvil.chainId, usdc),
    contracts,
    domain: batchSettlementDomain(anvil.chainId, contracts.escrow),
  };
}

export const randomSalt = (): Hex => toHex(randomBytes(32));

/**
 * A fresh channel from agent 0 to a receiver address of its own (so each scenario's settlement is
 * its own), the receiver side authorized by spare account 7.
 */
export function channelConfig(chain: EscrowChain, overrides: Partial<ChannelConfig> = {}): ChannelConfig {
  return {
    payer: DEV_ROLES.agents[0].address,
    payerAuthorizer: DEV_ROLES.agents[0].address,
    receiver: privateKeyToAccount(generatePrivateKey()).address,
    receiverAuthorizer: DEV_ROLES.spare[1].address,
    token: chain.usdc,
    withdrawDelay: 900,
    salt: randomSalt(),
    ...overrides,
  };
}

export const receiverAuthorizer = DEV_ROLES.spare[1];

/** Sends a transaction to the escrow from `sender` and waits for it; throws (with the revert) on failure. */
export async function escrowWrite(
  chain: EscrowChain,
  sender: DevAccount | LocalAccount,
  functionName: string,
  args: readonly unknown[],
  address: Address = chain.contracts.escrow,
): Promise<TransactionReceipt> {
  const account = 'account' in sender ? sender.account : sender;
  const wallet = devWalletClient(chain.anvil.rpcUrl, chain.anvil.chainId, account);
  // The escrow's ABI is wide; the specs pick functions by name.
  const hash: Hash = await wallet.writeContract({ address, abi: batchSettlementAbi, functionName, args } as never);
  const receipt = await chain.client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return receipt;
}

export function escrowRead<T>(chain: EscrowChain, functionName: string, args: readonly unknown[]): Promise<T> {
  return chain.client.readContract({
    address: chain.contracts.escrow,
    abi: batchSettlementAbi,
    functionName,
    args,
  } as never) as Promise<T>;
}

export async function channelState(
  chain: EscrowChain,
  config: ChannelConfig,
): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = await escrowRead<[bigint, bigint]>(chain, 'channels', [
    channelIdOf(chain.domain, config),
  ]);
  return { balance, totalClaimed };
}

export const balanceOf = (chain: EscrowChain, account: Address): Promise<bigint> =>
  usdcBalance({ rpcUrl: chain.anvil.rpcUrl, usdc: chain.usdc, account });

export const mint = (chain: EscrowChain, to: Address, amount: bigint): Promise<Hash> =>
  mintTestUsdc({ rpcUrl: chain.anvil.rpcUrl, usdc: chain.usdc, to, amount });

/** `collectorData` carrying the payer's EIP-3009 authorization of `amount` into the channel. */
export async function signDeposit(
  chain: EscrowChain,
  config: ChannelConfig,
  amount: bigint,
  payer: LocalAccount = DEV_ROLES.agents[0].account,
): Promise<Hex> {
  const signed = await signErc3009Deposit({
    payer,
    from: config.payer,
    tokenDomain: chain.tokenDomain,
    collector: chain.contracts.collector,
    channelId: channelIdOf(chain.domain, config),
    amount,
    salt: BigInt(randomSalt()),
    now: await chainTime(chain), // specs move the chain clock ahead of the wall clock
  });
  return erc3009CollectorData(signed);
}

/** The payer signs an EIP-3009 deposit for the channel; the relayer submits it. */
export async function depositInto(
  chain: EscrowChain,
  config: ChannelConfig,
  amount: bigint,
  payer: LocalAccount = DEV_ROLES.agents[0].account,
): Promise<TransactionReceipt> {
  const data = await signDeposit(chain, config, amount, payer);
  return escrowWrite(chain, DEV_ROLES.relayer, 'deposit', [config, amount, chain.contracts.collector, data]);
}

/** The latest block's timestamp, unix seconds. */
export async function chainTime(chain: EscrowChain): Promise<number> {
  return Number((await chain.client.getBlock({ blockTag: 'latest' })).timestamp);
}

/** A claim row carrying the payer authorizer's voucher for `maxClaimableAmount`. */
export async function voucherClaim(
  chain: EscrowChain,
  config: ChannelConfig,
  maxClaimableAmount: bigint,
  totalClaimed: bigint = maxClaimableAmount,
  signer: LocalAccount = DEV_ROLES.agents[0].account,
): Promise<VoucherClaim> {
  const signature = await signVoucher(signer, chain.domain, channelIdOf(chain.domain, config), maxClaimableAmount);
  return { voucher: { channel: config, maxClaimableAmount }, signature, totalClaimed };
}

/** claimWithSignature relayed by the relayer, signed by the receiver authorizer (or `signer`). */
export async function claimSigned(
  chain: EscrowChain,
  claims: readonly VoucherClaim[],
  signer: LocalAccount = receiverAuthorizer.account,
): Promise<TransactionReceipt> {
  const signature = await signClaimBatch(signer, chain.domain, claims);
  return escrowWrite(chain, DEV_ROLES.relayer, 'claimWithSignature', [claims, signature]);
}

/** The malleable twin (s → n − s, v flipped) of a 65-byte signature. */
export function highSTwin(signature: Hex): Hex {
  const r = signature.slice(2, 66);
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = parseInt(signature.slice(130, 132), 16);
  return `0x${r}${(CURVE_ORDER - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}` as Hex;
}
