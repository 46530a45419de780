import { rmSync } from 'node:fs';
import type { AnvilInstance } from '../../../libs/devchain/src/anvil';
import { pgliteTemplateDir } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const state = globalThis as { crawlgateAnvils?: AnvilInstance[] };
  const anvils = state.crawlgateAnvils ?? [];
  state.crawlgateAnvils = [];
  await Promise.all(anvils.map((anvil) => anvil.stop()));
  // The PGlite templates global-setup wrote (60 MB a run, uncompressed).
  rmSync(pgliteTemplateDir(), { recursive: true, force: true });
}
