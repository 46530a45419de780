import { Agent, request } from 'node:http';
import type { LoadRequest, LoadResult } from './load';

/** A request that has not answered in this long counts as an error. */
const TIMEOUT_MS = 10_000;

/**
 * Open loop at `rate` requests per second, spread evenly: each millisecond starts the requests then
 * due, over at most `connections` kept-alive connections (beyond them a request waits for one, and
 * that wait is in its latency). autocannon's own rate (overallRate) does not pace: each connection
 * sends its quota for the second back to back when the second starts, so a second's requests come
 * in one burst, and the p99 measured the burst's queue rather than the server.
 */
export async function pacedLoad(
  name: string,
  url: string,
  requests: LoadRequest[],
  seconds: number,
  connections: number,
  rate: number,
): Promise<LoadResult> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;

  const send = (index: number) =>
    new Promise<void>((resolve) => {
      const { method, path, headers, body } = requests[index % requests.length];
      const started = performance.now();
      const sent = request(
        { host: target.hostname, port: target.port, method, path, headers, agent, timeout: TIMEOUT_MS },
        (response) => {
          response.resume();
          response.on('end', () => {
            latencies.push(performance.now() - started);
            statuses[response.statusCode!] = (statuses[response.statusCode!] ?? 0) + 1;
            resolve();
          });
          response.on('error', () => {
            errors++;
            resolve();
          });
        },
      );
      sent.on('timeout', () => sent.destroy(new Error('timeout')));
      sent.on('error', () => {
        errors++;
        resolve();
      });
      sent.end(body);
    });

  const running = new Set<Promise<void>>();
  const total = Math.round(rate * seconds);
  const began = performance.now();
  let started = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * rate));
      for (; started < due; started++) {
        const pending = send(started);
        running.add(pending);
        void pending.then(() => running.delete(pending));
      }
      if (started >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  await Promise.all(running);
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const percentile = (q: number) =>
    latencies.length === 0 ? 0 : latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)];
  return {
    name,
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    statuses,
    errors,
  };
}
