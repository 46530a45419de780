import { connect, createServer, type Socket } from 'node:net';

/** Which way a chunk travels through the proxy. */
export type Direction = 'to-target' | 'to-client';

export interface TcpProxyOptions {
  /**
   * Sees every chunk before it is forwarded, with the number of its connection; returning false
   * drops it, 'reset' drops it and resets that connection alone, a promise holds it (and what
   * follows it on that connection and way) until it settles. Fault tests use it to cut at an
   * exact moment (mid-transaction, after a broadcast), to fail one request among many, or to let
   * one statement arrive late.
   */
  tap?: (chunk: Buffer, direction: Direction, connection: number) => boolean | 'reset' | Promise<void> | void;
}

export interface TcpProxy {
  /** Listens on 127.0.0.1:port. */
  port: number;
  /** Resets every live connection and, until restore(), every new one: the target looks down. */
  cut(): Promise<void>;
  /**
   * Resets every live connection and stops listening until restore(): a new connection is refused
   * (ECONNREFUSED), so a request made meanwhile provably never reached the target.
   */
  refuse(): Promise<void>;
  /** Forwards new connections again (listening again on the same port after refuse()). */
  restore(): Promise<void>;
  /** Resets everything and stops listening. */
  close(): Promise<void>;
}

/**
 * A fault-injection TCP proxy for tests, so shared services (PostgreSQL, Redis, the chain's RPC)
 * can "go down" for one app without being stopped. While cut, connections are accepted and reset
 * at once rather than refused: the port stays ours, so restore() can never lose it to another process.
 */
export async function startTcpProxy(
  targetHost: string,
  targetPort: number,
  options: TcpProxyOptions = {},
): Promise<TcpProxy> {
  let down = false;
  let connections = 0;
  const live = new Set<Socket>();
  const track = (socket: Socket) => {
    live.add(socket);
    socket.on('error', () => undefined); // a reset is the point here, not a failure
    socket.once('close', () => live.delete(socket));
  };

  const server = createServer((client) => {
    track(client);
    if (down) return reset(client);
    const id = ++connections;
    const target = connect(targetPort, targetHost);
    track(target);
    forward(client, target, 'to-target', id, options);
    forward(target, client, 'to-client', id, options);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject).listen(port, '127.0.0.1', () => (server.off('error', reject), resolve()));
    });
  await listen(0);
  const port = (server.address() as { port: number }).port;

  const resetAll = () =>
    Promise.all(
      [...live].map((socket) => new Promise<void>((resolve) => (socket.once('close', () => resolve()), reset(socket)))),
    );
  return {
    port,
    async cut() {
      down = true;
      await resetAll();
    },
    async refuse() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        void resetAll();
      });
    },
    async restore() {
      down = false;
      if (!server.listening) await listen(port);
    },
    async close() {
      down = true;
      await resetAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Copies `from` into `to` through the tap; an end is passed on as an end, anything else as a reset. */
function forward(from: Socket, to: Socket, direction: Direction, id: number, { tap }: TcpProxyOptions): void {
  const write = (chunk: Buffer) => {
    if (to.destroyed) return;
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  };
  from.on('data', (chunk: Buffer) => {
    const verdict = tap?.(chunk, direction, id);
    if (verdict === 'reset') return (reset(from), reset(to));
    if (verdict === false) return;
    if (verdict instanceof Promise) {
      from.pause(); // no later chunk may overtake the held one
      void verdict.finally(() => (write(chunk), from.resume()));
      return;
    }
    write(chunk);
  });
  from.once('end', () => to.end());
  from.once('close', (hadError) => (hadError ? reset(to) : to.end()));
}

function reset(socket: Socket): void {
  if (socket.destroyed) return;
  // An RST, as a crashed or restarted server gives; a socket still connecting can only be destroyed.
  if (socket.connecting) socket.destroy();
  else socket.resetAndDestroy();
}
