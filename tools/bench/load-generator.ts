import { startChild } from './child';
import type { LoadResult } from './load';
import type { LoadJob } from './load-worker';
import { LOAD_CPU } from './pinning';

export interface LoadGenerator {
  run(job: LoadJob): Promise<LoadResult>;
  close(): Promise<void>;
}

/** autocannon in its own process on its own core (load-worker.ts), one job at a time. */
export function startLoadGenerator(): LoadGenerator {
  const worker = startChild('load-worker.ts', { cpu: LOAD_CPU });
  return {
    async run(job) {
      worker.writeLine(JSON.stringify(job));
      return JSON.parse(await worker.readLine()) as LoadResult;
    },
    close: () => worker.close(),
  };
}
