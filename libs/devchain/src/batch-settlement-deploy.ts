import { encodeDeployData, type Address, type Hex, type LocalAccount, type PublicClient } from 'viem';
import { DEV_ROLES } from './accounts';
import { batchSettlementAbi, batchSettlementBytecode } from './artifacts/batch-settlement';
import { erc3009DepositCollectorAbi, erc3009DepositCollectorBytecode } from './artifacts/erc3009-deposit-collector';
import { devPublicClient, devTestClient, devWalletClient, DEV_POLLING_INTERVAL_MS } from './clients';

/** Where `@x402/evm` 2.x expects the batch-settlement escrow (x402's CREATE2 address on every chain). */
export const BATCH_SETTLEMENT_ADDRESS: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003';
/** Where `@x402/evm` sends payers' EIP-3009 deposit authorizations (`to` of ReceiveWithAuthorization). */
export const ERC3009_DEPOSIT_COLLECTOR_ADDRESS: Address = '0x4020806089470a89826cB9fB1f4059150b550004';

export interface BatchSettlementDeployment {
  escrow: Address;
  collector: Address;
}

/**
 * Puts our escrow and ERC-3009 deposit collector at x402's canonical addresses on a local anvil
 * chain with `anvil_setCode`, so unmodified x402 clients (which hard-code those addresses in their
 * signatures) pay into it. The escrow has no constructor state and the collector's only state is
 * an immutable (the escrow's address) inside its code, so no storage needs setting. Running it
 * again rewrites the same code and keeps the channels already stored.
 */
export async function placeBatchSettlement(opts: { rpcUrl: string }): Promise<BatchSettlementDeployment> {
  const client = devPublicClient(opts.rpcUrl);
  const escrowCode = await runtimeCode(client, batchSettlementBytecode);
  const collectorCode = await runtimeCode(
    client,
    encodeDeployData({
      abi: erc3009DepositCollectorAbi,
      bytecode: erc3009DepositCollectorBytecode,
      args: [BATCH_SETTLEMENT_ADDRESS],
    }),
  );
  const test = devTestClient(opts.rpcUrl);
  await test.setCode({ address: BATCH_SETTLEMENT_ADDRESS, bytecode: escrowCode });
  await test.setCode({ address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, bytecode: collectorCode });
  for (const [address, code] of [
    [BATCH_SETTLEMENT_ADDRESS, escrowCode],
    [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, collectorCode],
  ] as const) {
    if ((await client.getCode({ address }))?.toLowerCase() !== code.toLowerCase()) {
      throw new Error(`devchain: anvil_setCode did not place the batch-settlement code at ${address}`);
    }
  }
  return { escrow: BATCH_SETTLEMENT_ADDRESS, collector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS };
}

/**
 * Deploys the escrow and its collector with ordinary transactions (any EVM chain with EIP-1153;
 * x402 clients will not find it there, our own code can). Default sender: spare dev account 6.
 */
export async function deployBatchSettlement(opts: {
  rpcUrl: string;
  account?: LocalAccount;
}): Promise<BatchSettlementDeployment> {
  const client = devPublicClient(opts.rpcUrl);
  const wallet = devWalletClient(opts.rpcUrl, await client.getChainId(), opts.account ?? DEV_ROLES.spare[0].account);
  const escrow = await mined(
    client,
    await wallet.deployContract({ abi: batchSettlementAbi, bytecode: batchSettlementBytecode }),
  );
  const collector = await mined(
    client,
    await wallet.deployContract({
      abi: erc3009DepositCollectorAbi,
      bytecode: erc3009DepositCollectorBytecode,
      args: [escrow],
    }),
  );
  return { escrow, collector };
}

/** The code a creation transaction would leave behind, from an eth_call of the init code. */
async function runtimeCode(client: PublicClient, initCode: Hex): Promise<Hex> {
  const { data } = await client.call({ data: initCode });
  if (!data || data === '0x') throw new Error('devchain: creating the batch-settlement contracts returned no code');
  return data;
}

async function mined(client: PublicClient, hash: Hex): Promise<Address> {
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: DEV_POLLING_INTERVAL_MS });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`devchain: deployment ${hash} failed`);
  return receipt.contractAddress;
}
