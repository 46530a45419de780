/*
 * Who a request counts against, per the spec's scopes. The throttler hashes the tracker into its
 * key, so credentials never reach the limiter's storage in plaintext.
 */

/** The throttler hands trackers the raw request object (a FastifyRequest here). */
type Request = Record<string, any>;

const headerValue = (request: Request, name: string): string | undefined => {
  const value: unknown = request.headers?.[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
};

export const trackByIp = async (request: Request): Promise<string> => `ip:${request.ip}`;

export const trackBySiteToken = async (request: Request): Promise<string> =>
  headerValue(request, 'x-site-token') ? `site-token:${headerValue(request, 'x-site-token')}` : trackByIp(request);

export const trackByGate = async (request: Request): Promise<string> => `gate:${request.params?.id ?? ''}`;

/** The default scope: whichever credential the request carries, else its IP. */
export const trackByCredential = async (request: Request): Promise<string> => {
  const credential =
    headerValue(request, 'authorization') ?? headerValue(request, 'x-site-token') ?? headerValue(request, 'x-wallet-address')?.toLowerCase();
  return credential ? `credential:${credential}` : trackByIp(request);
};
