import { tuneV8ForServer } from '../../apps/api/src/app/v8-tuning';
import { databaseKind } from '../../apps/api/src/db/database';
import type { BenchStack } from './bench-api';
import { listenBenchApp } from './bench-app';
import { onParentGone } from './child';

/**
 * The API under test, in a process of its own, on the stack in BENCH_STACK (JSON: database URL and
 * schema, chain RPC URL, USDC address, master key). Prints its port once listening; shuts down
 * cleanly when its stdin ends, so `node --cpu-prof` writes its profile.
 */
async function main(): Promise<void> {
  const stack = JSON.parse(process.env.BENCH_STACK ?? '') as Omit<BenchStack, 'close'>;
  tuneV8ForServer(databaseKind(stack)); // as main.ts does
  const app = await listenBenchApp(stack);
  onParentGone(() => app.close());
  process.stdout.write(`${app.port}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
