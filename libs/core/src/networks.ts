/*
 * The chains Crawlgate settles on, with the USDC contract and its EIP-712 domain on each. The
 * domain name differs between Base ("USD Coin") and Base Sepolia ("USDC"): a wrong name makes
 * every signature, hence every settlement, fail.
 */

export type NetworkName = 'local' | 'base-sepolia' | 'base';

export interface UsdcInfo {
  /** null: deployed when the local chain starts, so only known at run time. */
  address: `0x${string}` | null;
  /** EIP-712 domain name and version of the token. */
  name: string;
  version: string;
  decimals: 6;
}

export interface NetworkInfo {
  name: NetworkName;
  chainId: number;
  caip2: `eip155:${number}`;
  /** The x402 v1 network name. */
  x402Network: string;
  usdc: UsdcInfo;
  /** Prefix of a transaction's explorer page; append the hash. */
  explorerTxUrl: string | null;
}

export const NETWORKS: Readonly<Record<NetworkName, NetworkInfo>> = deepFreeze({
  local: {
    name: 'local',
    chainId: 31337,
    caip2: 'eip155:31337',
    x402Network: 'local',
    usdc: { address: null, name: 'USD Coin', version: '2', decimals: 6 },
    explorerTxUrl: null,
  },
  'base-sepolia': {
    name: 'base-sepolia',
    chainId: 84532,
    caip2: 'eip155:84532',
    x402Network: 'base-sepolia',
    usdc: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2', decimals: 6 },
    explorerTxUrl: 'https://sepolia.basescan.org/tx/',
  },
  base: {
    name: 'base',
    chainId: 8453,
    caip2: 'eip155:8453',
    x402Network: 'base',
    usdc: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2', decimals: 6 },
    explorerTxUrl: 'https://basescan.org/tx/',
  },
});

export const NETWORK_NAMES = Object.keys(NETWORKS) as readonly NetworkName[];

export function isNetworkName(name: unknown): name is NetworkName {
  return typeof name === 'string' && Object.hasOwn(NETWORKS, name);
}

/** Throws on an unknown name, listing the valid ones (for a clear start-up error). */
export function getNetwork(name: string): NetworkInfo {
  if (!isNetworkName(name)) {
    throw new Error(`Unknown network "${String(name)}": expected one of ${NETWORK_NAMES.join(', ')}`);
  }
  return NETWORKS[name];
}

/** The CAIP-2 id of an EVM chain, as x402 v2 names networks: caip2(8453) → "eip155:8453". */
export function caip2(chainId: number): `eip155:${number}` {
  if (!Number.isSafeInteger(chainId) || chainId <= 0)
    throw new RangeError(`Chain id must be a positive integer, got ${chainId}`);
  return `eip155:${chainId}`;
}

/** The network an x402 payment names, by v1 name ("base") or v2 CAIP-2 id ("eip155:8453"); null if none. */
export function findNetworkByX402(network: string): NetworkInfo | null {
  for (const name of NETWORK_NAMES) {
    const info = NETWORKS[name];
    if (info.x402Network === network || info.caip2 === network) return info;
  }
  return null;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
