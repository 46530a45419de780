import { startChild } from './child';
import type { LoadResult } from './load';
import type { LoadJob } from './load-worker';
import { LOAD_CPU } from './pinning';

export interface LoadGenerator {
  run(job: LoadJob): Promise<LoadResult>;
  close(): Promise<void>;
}

/** load.ts (autocannon, or paced at a rate) in its own process (load-worker.ts), on its own core unless `pinned` is false, one job at a time. */
export function startLoadGenerator({ pinned = true }: { pinned?: boolean } = {}): LoadGenerator {
  const worker = startChild('load-worker.ts', { cpu: pinned ? LOAD_CPU : undefined });
  return {
    async run(job) {
      worker.writeLine(JSON.stringify(job));
      return JSON.parse(await worker.readLine()) as LoadResult;
    },
    close: () => worker.close(),
  };
}
