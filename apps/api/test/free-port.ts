import { createServer, type AddressInfo } from 'node:net';

/** A loopback port that was just free: for a server that must know its address before it starts, or a node that refuses connections. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
