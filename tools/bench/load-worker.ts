import { createInterface } from 'node:readline';
import { onParentGone } from './child';
import { load } from './load';

/**
 * The load generator, in a process of its own: each stdin line is a JSON LoadJob, answered by one
 * stdout line, the JSON LoadResult of that run (load.ts: autocannon, or paced at a rate).
 */
export interface LoadJob {
  name: string;
  url: string;
  requests: Parameters<typeof load>[2];
  seconds: number;
  connections: number;
  /** Requests per second over all connections; unset, as fast as the server answers. */
  rate?: number;
}

async function main(): Promise<void> {
  onParentGone(async () => undefined);
  for await (const line of createInterface({ input: process.stdin })) {
    const job = JSON.parse(line) as LoadJob;
    const result = await load(job.name, job.url, job.requests, job.seconds, job.connections, job.rate);
    process.stdout.write(JSON.stringify(result) + '\n');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
