import type { ChainContext } from './chain-context';

/**
 * Gas one settlement is counted at when telling how many the relayer can still pay for: a relayed
 * USDC transferWithAuthorization measured 61k–90k on Base, a claim batch more; rounded up.
 */
export const SETTLEMENT_GAS = 100_000n;
/** Fewer settlements than this left in the relayer's balance, at today's gas price, is "low". */
export const RELAYER_LOW_SETTLEMENTS = 1_000n;

/** The chain as the money path needs it: its head, and the gas the relayer holds for settlements. */
export interface ChainReading {
  block: number;
  /** By this machine's clock: a node that stopped following the chain shows here. */
  blockAgeSeconds: number;
  relayer: { address: string; balanceWei: string; settlementsLeft: string; low: boolean };
}

/** Settlements a balance pays for at a gas price (SETTLEMENT_GAS each); a zero price counts as one wei. */
export function settlementsLeft(balanceWei: bigint, gasPriceWei: bigint): bigint {
  const price = gasPriceWei > 0n ? gasPriceWei : 1n;
  return balanceWei / (price * SETTLEMENT_GAS);
}

/** The relayer's balance, and how many settlements it pays for at today's gas price; throws when the node does not answer. */
export async function readRelayerGas(chain: ChainContext): Promise<{ balance: bigint; settlementsLeft: bigint }> {
  const [balance, gasPrice] = await Promise.all([
    chain.publicClient.getBalance({ address: chain.relayer.account.address }),
    chain.publicClient.getGasPrice(),
  ]);
  return { balance, settlementsLeft: settlementsLeft(balance, gasPrice) };
}

/** The latest block and the relayer's gas; throws when the node does not answer. */
export async function readChain(chain: ChainContext): Promise<ChainReading> {
  const address = chain.relayer.account.address;
  const [block, { balance, settlementsLeft: left }] = await Promise.all([
    chain.publicClient.getBlock({ blockTag: 'latest' }),
    readRelayerGas(chain),
  ]);
  return {
    block: Number(block.number),
    blockAgeSeconds: Math.max(0, Math.floor(Date.now() / 1000) - Number(block.timestamp)),
    relayer: {
      address,
      balanceWei: balance.toString(),
      settlementsLeft: left.toString(),
      low: left < RELAYER_LOW_SETTLEMENTS,
    },
  };
}
