import { NETWORKS, type NetworkName } from '@crawlgate/core';

/** The block explorer page of a transaction on a real network; null on the local chain or an unknown one. */
export function explorerTxUrl(network: string, txHash: string | null): string | null {
  if (!txHash || !/^0x[0-9a-fA-F]{64}$/.test(txHash) || !Object.hasOwn(NETWORKS, network)) return null;
  const prefix = NETWORKS[network as NetworkName].explorerTxUrl;
  return prefix ? `${prefix}${txHash}` : null;
}
