import type { LoadGenerator } from './load-generator';
import type { LoadJob } from './load-worker';
import { median, type ServerTime } from './paired';
import { cpuTimes } from './process-cpu';

/** A server under test, in a process of its own. */
export interface BenchServer {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/**
 * One autocannon run against `server`: its req/s, and what it did with the round's time. A round
 * that met any other answer than `status` (a 429 included), or a connection error, fails the run.
 */
export async function round(
  loadgen: LoadGenerator,
  server: BenchServer,
  requests: LoadJob['requests'],
  status: number,
  seconds: number,
  connections: number,
) {
  const before = cpuTimes(server.pid);
  const result = await loadgen.run({ name: server.url, url: server.url, requests, seconds, connections });
  const after = cpuTimes(server.pid);
  if (result.errors > 0 || Object.keys(result.statuses).some((answered) => Number(answered) !== status)) {
    throw new Error(
      `${server.url}: expected only ${status}, got ${JSON.stringify(result.statuses)} and ${result.errors} connection errors`,
    );
  }
  return {
    rate: result.requestsPerSecond,
    server: { busy: (after.running - before.running) / seconds, waiting: (after.waiting - before.waiting) / seconds },
  };
}

/**
 * Each request once, `concurrency` at a time, before any round: a server that keeps something per
 * credential (the API's prices and secrets per site) then starts its rounds as a running instance
 * would be, not loading half its sites while it is timed. Any other answer than `status` fails the run.
 */
export async function primeEach(
  server: BenchServer,
  requests: LoadJob['requests'],
  status: number,
  concurrency = 32,
): Promise<void> {
  for (let i = 0; i < requests.length; i += concurrency) {
    const answers = await Promise.all(
      requests.slice(i, i + concurrency).map(async ({ method, path, headers, body }) => {
        const response = await fetch(server.url + path, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const other = answers.find((answered) => answered !== status);
    if (other !== undefined) throw new Error(`${server.url}: expected only ${status} while priming, got ${other}`);
  }
}

export const medianTime = (times: ServerTime[]): ServerTime => ({
  busy: median(times.map((t) => t.busy)),
  waiting: median(times.map((t) => t.waiting)),
});
