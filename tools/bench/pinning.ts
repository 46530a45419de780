import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Which core each process of a server benchmark runs on: the server under test on one, the load
 * generator on the other, so neither's work is counted in the other's time.
 */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

export interface Pinning {
  pinned: boolean;
  /** Said in the benchmark's output, so an unpinned run is never mistaken for a pinned one. */
  note: string;
}

export const pinning: Pinning = detect();

function detect(): Pinning {
  if (availableParallelism() < 2) return { pinned: false, note: 'fewer than 2 cores available: processes not pinned' };
  try {
    execFileSync('sh', ['-c', 'command -v taskset'], { stdio: 'ignore' });
  } catch {
    return {
      pinned: false,
      note: 'taskset not found: processes not pinned, server and load generator share the cores',
    };
  }
  return { pinned: true, note: `server on CPU ${SERVER_CPU}, load generator on CPU ${LOAD_CPU} (taskset -c)` };
}

/** The command line, run on `cpu` when pinning is available. */
export function onCpu(cpu: number, argv: string[]): string[] {
  return pinning.pinned ? ['taskset', '-c', String(cpu), ...argv] : argv;
}
