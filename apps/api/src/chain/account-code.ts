import type { Address, PublicClient } from 'viem';

/** Whether `address` has code now: a contract wallet, or an EOA delegating to one (EIP-7702). */
export async function hasCode(client: Pick<PublicClient, 'getCode'>, address: Address): Promise<boolean> {
  const code = await client.getCode({ address });
  return code !== undefined && code !== '0x';
}
