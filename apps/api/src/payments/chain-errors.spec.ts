import { neverConnected } from './chain-errors';

/** Node's error for a socket, as viem passes it on: the cause of the error it throws. */
const socketError = (code: string, syscall?: string) =>
  Object.assign(new Error(`${syscall ?? 'socket'} ${code}`), { code, ...(syscall ? { syscall } : {}) });

describe('neverConnected', () => {
  it('reads a connection that failed to open as one the node never saw, through viem’s causes', () => {
    expect(neverConnected(new Error('fetch failed', { cause: socketError('ECONNREFUSED', 'connect') }))).toBe(true);
    expect(neverConnected(new Error('fetch failed', { cause: socketError('ENOTFOUND', 'getaddrinfo') }))).toBe(true);
    expect(neverConnected(socketError('EHOSTUNREACH'))).toBe(true);
  });

  it('does not read an unreachable host on a socket already open as never connected: the request may have arrived', () => {
    expect(neverConnected(new Error('fetch failed', { cause: socketError('EHOSTUNREACH', 'read') }))).toBe(false);
    expect(neverConnected(socketError('ENETUNREACH', 'write'))).toBe(false);
    expect(neverConnected(new Error('fetch failed', { cause: socketError('ECONNRESET', 'read') }))).toBe(false);
  });
});
