import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { VERSION } from './config';
import type { WalletSession } from './session';
import { registerFetchPage } from './tools/fetch-page';
import { registerQuotePrice } from './tools/quote-price';
import { registerSpending } from './tools/spending';

/**
 * An MCP server with the three tools, paying from `session`. Make one per connection (the SDK
 * binds a server to one transport); they all share the session, hence its budget.
 */
export function createMcpServer(session: WalletSession): McpServer {
  const server = new McpServer(
    { name: 'crawlgate', version: VERSION },
    {
      instructions:
        'Reads web pages that may cost money (HTTP 402, paid in USDC from a wallet this server holds). fetch_page pays by itself within ' +
        `the limits (at most ${session.maxPriceUsd} USD a page, ${session.budgetUsd} USD in all); quote_price tells a price without paying; ` +
        'spending reports what has been paid. A refusal is an error result whose text is {"error": {"code", "message", …}}.',
    },
  );
  registerFetchPage(server, session);
  registerQuotePrice(server, session);
  registerSpending(server, session);
  return server;
}
