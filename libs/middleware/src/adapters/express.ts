/*
 * Express (4 and 5) and Connect: `app.use(crawlgateExpress(options))`, before your routes.
 * Uses only Node's own request/response API, so any Connect-style stack works.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCrawlgate, type CrawlgateOptions } from '../crawlgate';
import type { Decision } from '../decision';
import { nodeHeaders } from '../request-headers';
import { createClientAddress } from './client-address';
import { FrameworkGateRequest } from './framework-gate-request';
import { keepPaidAnswerHeaders } from './paid-answer';
import { withNodeKeyDirectoryFetch } from '../web-bot-auth/node-directory-fetch';

type NodeRequest = IncomingMessage & {
  originalUrl?: string;
  baseUrl?: string;
  ip?: string;
  app?: unknown;
};

/** The middleware, and close(): stop the gate's background refresh and report its last counts. */
export type CrawlgateExpressMiddleware = ((
  req: NodeRequest,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void) & { close(): Promise<void> };

/**
 * The router's leniency is not read from the app: `express.Router()` ignores the app's `case
 * sensitive routing` and `strict routing`, so those settings can say strict while routes are not.
 * Lenient unless `options.routing` says otherwise.
 */
export function crawlgateExpress(options: CrawlgateOptions): CrawlgateExpressMiddleware {
  const gate = createCrawlgate(withNodeKeyDirectoryFetch(options));
  const logger = options.logger ?? console;
  const addressOf = createClientAddress(logger, 'express');
  let warnedMounted = false;
  const middleware = function crawlgate(req: NodeRequest, res: ServerResponse, next: (error?: unknown) => void): void {
    // Express enters a mount by the raw path: /%70remium/x never reaches a gate mounted at /premium,
    // while the routes and static files after it read it as /premium/x. Said once, not fixable here.
    if (req.baseUrl && !warnedMounted) {
      warnedMounted = true;
      logger.warn(
        `crawlgate: mounted at ${req.baseUrl}: Express hands the gate only requests whose raw path starts with it, so an escaped spelling of it (a letter written %XX) reaches the routes after it ungated; mount the gate at the app's root (app.use(crawlgateExpress(options))) and price the paths that are free at 0`,
      );
    }
    // originalUrl: the URL before Express stripped a mount path from req.url.
    const url = req.originalUrl ?? req.url ?? '/';
    // What the router routes by: req.url, under the mount path, after any rewrite before the gate.
    const routedUrl = req.originalUrl === undefined ? undefined : `${req.baseUrl ?? ''}${req.url ?? ''}`;
    const decision = gate.handleNow(
      new FrameworkGateRequest(req.method ?? 'GET', url, routedUrl, nodeHeaders(req.headers), req, addressOf),
    );
    // A decision that needs no I/O (a person, a token, a 402) is applied at once, with no promise.
    if (decision instanceof Promise) decision.then((settled) => answer(settled, res, next), next);
    else answer(decision, res, next);
  };
  return Object.assign(middleware, { close: () => gate.close() });
}

/** The gate's own answer, or on to the routes with the gate's headers set. */
function answer(decision: Decision, res: ServerResponse, next: (error?: unknown) => void): void {
  try {
    if (decision.kind === 'respond') {
      res.writeHead(decision.status, decision.headers).end(decision.body);
      return;
    }
    // Set now, sent with whatever the route answers, and set again over the route's own as it does.
    if (decision.kind === 'pass-after-payment') {
      for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
      keepPaidAnswerHeaders(res, decision.headers);
    }
  } catch (error) {
    next(error); // a header Node refuses: the app's error answer, never the page nor a crashed process
    return;
  }
  next();
}
