import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  /** Connection errors and timeouts: a round with any measured something other than the server's answers. */
  errors: number;
}

/**
 * Drives an HTTP endpoint with autocannon for `seconds`, cycling through `requests`
 * (different credentials, so per-credential rate limits are not what is measured).
 */
export async function load(
  name: string,
  url: string,
  requests: { method: 'POST' | 'GET'; path: string; headers: Record<string, string>; body?: string }[],
  seconds = 8,
  connections = 16,
  /** Requests per second over all connections (open loop at that rate); unset, as fast as the server answers. */
  rate?: number,
): Promise<LoadResult> {
  const statuses: Record<string, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections,
        duration: seconds,
        ...(rate === undefined ? {} : { overallRate: rate }),
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
