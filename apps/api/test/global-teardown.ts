import type { AnvilInstance } from '../../../libs/devchain/src/anvil';

export default async function globalTeardown(): Promise<void> {
  const anvils = (globalThis as { crawlgateAnvils?: AnvilInstance[] }).crawlgateAnvils ?? [];
  await Promise.all(anvils.map((anvil) => anvil.stop()));
}
