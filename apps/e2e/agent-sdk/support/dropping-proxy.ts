import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A proxy in front of the real site at `upstreamUrl` that loses answers: a request `drops` picks is
 * sent on and answered by the site in full (a gate settles its payment), then the agent's
 * connection is dropped before any of that answer reaches it. Every other request passes through.
 */
export async function startDroppingProxy(
  upstreamUrl: string,
  drops: (request: IncomingMessage) => boolean,
): Promise<{
  url: string;
  /** What the site answered to each dropped request, in order. */
  lost: { status: number; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}> {
  const upstreamPort = Number(new URL(upstreamUrl).port);
  const lost: { status: number; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    const dropped = drops(req);
    const upstream = httpRequest(
      { host: '127.0.0.1', port: upstreamPort, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        if (!dropped) {
          res.writeHead(answer.statusCode!, answer.headers);
          return void answer.pipe(res);
        }
        answer.resume().on('end', () => {
          lost.push({ status: answer.statusCode!, headers: answer.headers });
          res.socket?.destroy();
        });
      },
    );
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lost,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A picker for startDroppingProxy: the first `count` requests carrying a payment header (X-PAYMENT or PAYMENT-SIGNATURE). */
export function firstPaid(count = 1): (request: IncomingMessage) => boolean {
  let left = count;
  return (request) => {
    const paying = request.headers['x-payment'] !== undefined || request.headers['payment-signature'] !== undefined;
    return paying && left-- > 0;
  };
}
