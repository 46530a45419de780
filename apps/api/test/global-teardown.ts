import type { AnvilInstance } from '../../../libs/devchain/src/anvil';

export default async function globalTeardown(): Promise<void> {
  const state = globalThis as { crawlgateAnvils?: AnvilInstance[] };
  const anvils = state.crawlgateAnvils ?? [];
  state.crawlgateAnvils = [];
  await Promise.all(anvils.map((anvil) => anvil.stop()));
}
