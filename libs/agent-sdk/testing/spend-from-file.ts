/*
 * A child process spending from a shared budget file, for file-budget-store.spec.ts:
 *   spend-from-file <file> <limitMicros> <priceMicros> <mode> [<barrier dir> <parties>]
 * mode "drain": reserve and commit `price` until refused, then print how many payments it made;
 * with a barrier, it starts only once `parties` processes have arrived there (so a fast machine
 * cannot let one process drain the file before the other has started).
 * mode "crash": reserve `price`, print "reserved", and wait to be killed without settling.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFileBudgetStore } from '../src/file-budget-store';

async function main(): Promise<void> {
  const [file, limit, price, mode, barrier, parties] = process.argv.slice(2);
  const store = createFileBudgetStore(file);
  if (mode === 'crash') {
    if (!(await store.reserve(BigInt(price), BigInt(limit)))) throw new Error('nothing left to reserve');
    process.stdout.write('reserved\n');
    setInterval(() => undefined, 1000);
    return;
  }
  if (barrier) await arrive(barrier, Number(parties));
  let paid = 0;
  for (;;) {
    const reserved = await store.reserve(BigInt(price), BigInt(limit));
    if (!reserved) break;
    // A payment takes a moment: the other process reserves meanwhile.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
    await store.settle(reserved.reservation, true);
    paid += 1;
  }
  process.stdout.write(`${paid}\n`);
}

async function arrive(barrier: string, parties: number): Promise<void> {
  writeFileSync(join(barrier, String(process.pid)), '');
  while (readdirSync(barrier).length < parties) await new Promise((resolve) => setTimeout(resolve, 5));
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
