import autocannon from 'autocannon';
import { pacedLoad } from './paced-load';

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  /** Connection errors and timeouts: a round with any measured something other than the server's answers. */
  errors: number;
}

export interface LoadRequest {
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Drives an HTTP endpoint for `seconds`, cycling through `requests` (different credentials, so
 * per-credential rate limits are not what is measured): as fast as the server answers with
 * autocannon, or at `rate` requests per second spread evenly (pacedLoad).
 */
export async function load(
  name: string,
  url: string,
  requests: LoadRequest[],
  seconds = 8,
  connections = 16,
  /** Requests per second over all connections (open loop at that rate); unset, as fast as the server answers. */
  rate?: number,
): Promise<LoadResult> {
  if (rate !== undefined) return pacedLoad(name, url, requests, seconds, connections, rate);
  const statuses: Record<string, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        requests: requests.map((request) => ({
          ...request,
          headers: { 'content-type': 'application/json', ...request.headers },
        })),
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    );
    instance.on('response', (_client: unknown, statusCode: number) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    statuses,
    errors: result.errors,
  };
}
