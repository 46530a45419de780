/*
 * A child process spending from a shared budget file, for file-budget-store.spec.ts:
 *   spend-from-file <file> <limitMicros> <priceMicros> <mode>
 * mode "drain": reserve and commit `price` until refused, then print how many payments it made.
 * mode "crash": reserve `price`, print "reserved", and wait to be killed without settling.
 */
import { createFileBudgetStore } from '../../src/file-budget-store';

async function main(): Promise<void> {
  const [file, limit, price, mode] = process.argv.slice(2);
  const store = createFileBudgetStore(file);
  if (mode === 'crash') {
    if (!(await store.reserve(BigInt(price), BigInt(limit)))) throw new Error('nothing left to reserve');
    process.stdout.write('reserved\n');
    setInterval(() => undefined, 1000);
    return;
  }
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

main().catch((error) => {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
});
