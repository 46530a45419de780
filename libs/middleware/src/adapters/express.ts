/*
 * Express (4 and 5) and Connect: `app.use(crawlgateExpress(options))`, before your routes.
 * Uses only Node's own request/response API, so any Connect-style stack works.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCrawlgate, type CrawlgateOptions, type RoutingOptions } from '../crawlgate';
import { nodeHmacSha256 } from '../node-hmac';

/** Express's app settings; absent in a plain Connect stack. */
interface ExpressApp {
  get(setting: string): unknown;
}

type NodeRequest = IncomingMessage & { originalUrl?: string; ip?: string; app?: ExpressApp };

/** The middleware, and close(): stop the gate's background refresh and report its last counts. */
export type CrawlgateExpressMiddleware = ((
  req: NodeRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void) & { close(): Promise<void> };

export function crawlgateExpress(options: CrawlgateOptions): CrawlgateExpressMiddleware {
  const gate = createCrawlgate(options, nodeHmacSha256);
  const middleware = function crawlgate(req: NodeRequest, res: ServerResponse, next: (error?: unknown) => void): void {
    // originalUrl: the URL before Express stripped a mount path from req.url.
    const url = req.originalUrl ?? req.url ?? '/';
    const routing = options.routing ?? expressRouting(req.app);
    gate
      .handle({
        method: req.method ?? 'GET',
        url,
        headers: req.headers,
        ip: req.ip ?? req.socket.remoteAddress,
        routing,
      })
      .then((decision) => {
        try {
          if (decision.kind === 'respond') {
            res.writeHead(decision.status, decision.headers).end(decision.body);
            return;
          }
          // Set now, sent with whatever the route answers.
          if (decision.kind === 'pass-after-payment')
            for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
        } catch (error) {
          next(error); // a header Node refuses: the app's error answer, never the page nor a crashed process
          return;
        }
        next();
      }, next);
  };
  return Object.assign(middleware, { close: () => gate.close() });
}

/** Express routes case-insensitively and ignores a trailing slash unless told otherwise; Connect: unknown, so lenient. */
function expressRouting(app: ExpressApp | undefined): RoutingOptions {
  if (typeof app?.get !== 'function') return {};
  return {
    caseSensitive: app.get('case sensitive routing') === true,
    strictTrailingSlash: app.get('strict routing') === true,
  };
}
