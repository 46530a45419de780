import { setFlagsFromString } from 'node:v8';
import type { Database } from '../db/database';

/**
 * The old generation may grow to 1.5× what survived the last full GC. V8's own factor (up to 4×)
 * let payments' garbage, which outlives two scavenges while it waits on the chain, hold the heap
 * near 200 MiB between full GCs against about 75 MiB live (`npm run bench -- load`).
 */
export const HEAP_GROWING_PERCENT = 50;

/**
 * V8 settings for the API's process, applied before its database opens. Besides the heap's growth:
 * on PostgreSQL the only WebAssembly is Prisma's query compiler (3.4 MB), and V8's optimising tier
 * kept about 80 MiB of compile memory in malloc's arenas for good; the baseline tier (Liftoff) is
 * enough to plan our few ORM queries. On PGlite the database itself is WebAssembly and keeps the
 * optimising tier. Both flags are read when used (at each full GC, at each module's compilation),
 * which is why setting them at run time takes effect; the load test's memory figure shows it.
 */
export function tuneV8ForServer(database: Database['kind']): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (database === 'postgres') setFlagsFromString('--liftoff-only');
}
