/*
 * Express (4 and 5) and Connect: `app.use(crawlgateExpress(options))`, before your routes.
 * Uses only Node's own request/response API, so any Connect-style stack works.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCrawlgate, type CrawlgateOptions } from '../crawlgate';

type NodeRequest = IncomingMessage & { originalUrl?: string; ip?: string };

export function crawlgateExpress(options: CrawlgateOptions) {
  const gate = createCrawlgate(options);
  return function crawlgate(req: NodeRequest, res: ServerResponse, next: (error?: unknown) => void): void {
    // originalUrl: the URL before Express stripped a mount path from req.url.
    const url = req.originalUrl ?? req.url ?? '/';
    gate.handle({ method: req.method ?? 'GET', url, headers: req.headers, ip: req.ip ?? req.socket.remoteAddress }).then((decision) => {
      if (decision.kind === 'respond') {
        res.writeHead(decision.status, decision.headers).end(decision.body);
        return;
      }
      // Set now, sent with whatever the route answers.
      if (decision.kind === 'pass-after-payment') for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
      next();
    }, next);
  };
}
