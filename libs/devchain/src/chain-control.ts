import type { Hex } from 'viem';
import { devPublicClient, devTestClient } from './clients';

// Test-only controls of an anvil chain. A snapshot id can be reverted to once: anvil deletes it
// (and every later snapshot) on revert, so take a new snapshot after each revert.

/** evm_snapshot: returns the id to pass to `revert`. */
export async function snapshot(rpcUrl: string): Promise<Hex> {
  return devTestClient(rpcUrl).snapshot();
}

/**
 * evm_revert: restores the chain's state to `id`; throws if anvil does not know the id. A revert
 * undoes state, not time: anvil would go on stamping blocks from the snapshot's clock, so blocks
 * mined after a long test would carry times in the past. The clock is set back to the wall clock
 * (never before the restored block).
 */
export async function revert(rpcUrl: string, id: Hex): Promise<void> {
  const client = devTestClient(rpcUrl);
  // viem types the result as void; anvil answers a boolean.
  const ok: unknown = await client.request({ method: 'evm_revert', params: [id] });
  if (ok !== true) throw new Error(`devchain: evm_revert(${id}) failed: unknown or already used snapshot`);
  const restored = (await devPublicClient(rpcUrl).getBlock({ blockTag: 'latest' })).timestamp;
  const wall = BigInt(Math.floor(Date.now() / 1000));
  await client.request({
    method: 'anvil_setTime' as never,
    params: [Number(wall > restored ? wall : restored)] as never,
  });
}

/** Mines `n` empty blocks at once. */
export async function mineBlocks(rpcUrl: string, n: number): Promise<void> {
  if (!Number.isInteger(n) || n < 1) throw new Error(`devchain: cannot mine ${n} blocks`);
  await devTestClient(rpcUrl).mine({ blocks: n });
}

/**
 * Moves the chain clock forward by `seconds` and mines a block so `latest` shows the new time;
 * with `mine: false`, only the next block mined does (an idle chain mining on demand).
 */
export async function increaseTime(rpcUrl: string, seconds: number, { mine = true } = {}): Promise<void> {
  const client = devTestClient(rpcUrl);
  await client.increaseTime({ seconds });
  if (mine) await client.mine({ blocks: 1 });
}
