import { crawlgateExpress } from '@crawlgate/middleware/express';
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGatedSite } from '../../middleware/support/gated-site';
import { switchOnBatchSettlement } from '../../middleware/support/voucher-site';

/** What one request to a logged site carried. */
export interface SeenRequest {
  path: string;
  payment?: string;
  token?: string;
}

/**
 * A priced site taking x402 batch-settlement vouchers (startGatedSite: its API and chain), served
 * by Express gated by our middleware (terms refreshed every `refreshMs`), "content of <path>" on
 * every path, logging what each request carried before the gate; `before` adds the site's own
 * routes in front of the gate (a redirect, say).
 */
export async function startLoggedSite({
  refreshMs,
  before,
}: { refreshMs?: number; before?: (app: Express) => void } = {}) {
  const gated = await startGatedSite();
  await switchOnBatchSettlement(gated);
  const seen: SeenRequest[] = [];
  const app = express();
  app.use((req, _res, next) => {
    seen.push({
      path: req.path,
      payment: req.get('payment-signature') ?? undefined,
      token: req.get('x-crawlgate-token') ?? undefined,
    });
    next();
  });
  before?.(app);
  app.use(crawlgateExpress(gated.options(refreshMs ? { refreshMs } : {})));
  app.get('/{*path}', (req, res) => void res.send(`content of ${req.path}`));
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    gated,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    /** What the requests for `path` carried, in order. */
    of: (path: string) => seen.filter((request) => request.path === path),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gated.close();
    },
  };
}

export type LoggedSite = Awaited<ReturnType<typeof startLoggedSite>>;
