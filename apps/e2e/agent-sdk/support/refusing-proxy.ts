import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A site that keeps the payments it is sent and refuses them: in front of the real site at
 * `upstreamUrl`, whose answers (its 402s) pass through; any request carrying a payment header
 * (X-PAYMENT or PAYMENT-SIGNATURE) is answered 402 insufficient_funds and its header kept.
 */
export async function startRefusingProxy(upstreamUrl: string): Promise<{
  url: string;
  /** The payment headers kept, in order. */
  kept: string[];
  close(): Promise<void>;
}> {
  const upstreamPort = Number(new URL(upstreamUrl).port);
  const kept: string[] = [];
  const server = createServer((req, res) => {
    const payment = req.headers['x-payment'] ?? req.headers['payment-signature'];
    if (typeof payment === 'string') {
      kept.push(payment);
      res.writeHead(402, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ x402Version: 1, error: 'insufficient_funds', accepts: [] }));
      return;
    }
    const upstream = httpRequest(
      { host: '127.0.0.1', port: upstreamPort, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    kept,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
