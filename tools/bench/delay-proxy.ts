import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { onParentGone } from './child';

/**
 * A network's delay on loopback, in a process of its own: `delay-proxy.ts <port> <oneWayMs>` takes
 * TCP connections and relays them to 127.0.0.1:<port>, holding every chunk oneWayMs in each
 * direction, so a request and its answer cross a round trip of at least 2 × oneWayMs (timers fire
 * late, never early). Chunks keep their order: one delay for all, and timers of one delay fire in
 * the order they were set. Prints its port once listening.
 */
function main(): void {
  const target = Number(process.argv[2]);
  const oneWayMs = Number(process.argv[3]);
  if (!Number.isInteger(target) || !(oneWayMs >= 0)) throw new Error('usage: delay-proxy.ts <port> <oneWayMs>');
  const server = createServer((client) => {
    const upstream = connect(target, '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    relay(client, upstream, oneWayMs);
    relay(upstream, client, oneWayMs);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
  onParentGone(async () => undefined); // its connections die with it
}

/** from's bytes, then its end, to `to` oneWayMs later; an error on either side drops both. */
function relay(from: Socket, to: Socket, oneWayMs: number): void {
  from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), oneWayMs));
  from.on('end', () => setTimeout(() => to.end(), oneWayMs));
  from.on('error', () => to.destroy());
}

main();
