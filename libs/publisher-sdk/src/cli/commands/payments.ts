import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '@crawlgate/core';
import type { SitePayment, SitePaymentPage } from '../../types';
import { print, stringValue, type Command } from '../command';
import { UsageError } from '../errors';
import { shellWord } from '../shell-word';
import { openSite, SITE_HELP } from '../site-ref';
import { table } from '../table';

export const payments: Command = {
  name: 'payments',
  usage: '<site> [--limit <n>] [--cursor <cursor>] [--all]',
  summary: 'Confirmed payments to a site, newest first, a page at a time',
  help: [
    `--limit <n>: payments per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}). --cursor <cursor>: the page after the one`,
    'that printed it. --all: every payment, following the pages (with --json: {items, next_cursor: null}).',
    'These are the filters the API offers; for totals by day, path and agent, see `crawlgate stats`.',
    SITE_HELP,
  ].join('\n'),
  options: { limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' } },
  positionals: ['site'],
  async run(input) {
    const limitText = stringValue(input.values, 'limit');
    if (limitText !== undefined && !/^\d{1,6}$/.test(limitText))
      throw new UsageError(
        `--limit takes a whole number from 1 to ${MAX_PAGE_SIZE}, got ${JSON.stringify(limitText)}`,
        'payments',
      );
    const limit = limitText === undefined ? undefined : Number(limitText);
    const cursor = stringValue(input.values, 'cursor');
    if (input.values.all === true && cursor !== undefined)
      throw new UsageError('--all starts from the newest payment: leave out --cursor', 'payments');

    const { client, siteId } = await openSite(input);
    let page: SitePaymentPage;
    if (input.values.all === true) {
      const items: SitePayment[] = [];
      for await (const payment of client.iterateSitePayments(siteId, { limit })) items.push(payment);
      page = { items, next_cursor: null };
    } else {
      page = await client.sitePayments(siteId, { limit, cursor });
    }
    print(input, page, () => {
      if (page.items.length === 0) return cursor === undefined ? 'No payments yet.\n' : 'No more payments.\n';
      const rows = table(
        ['PAID AT', 'PATH', 'USD', 'PAYER', 'NETWORK', 'TX'],
        page.items.map((p) => [p.paid_at, p.url, p.price_usd, p.payer, p.network, p.tx_hash ?? '']),
      );
      const more =
        page.next_cursor === null
          ? ''
          : `\nMore: crawlgate payments ${shellWord(input.args[0])} --cursor ${shellWord(page.next_cursor)}${limitText ? ` --limit ${shellWord(limitText)}` : ''}\n`;
      return rows + more;
    });
  },
};
