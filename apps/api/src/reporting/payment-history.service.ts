import { Inject, Injectable } from '@nestjs/common';
import type { Database } from '../db/database';
import { DATABASE } from '../db/tokens';
import type { Prisma } from '../generated/prisma/client';
import { encodeCursor, type Cursor } from './cursor';
import { PAID } from './paid-payments';
import type { PageRequest } from './page-request';
import { PAYMENT_ITEM_COLUMNS, type PaymentItemRow } from './payment-items';

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Paid payments newest first, by keyset: pages stay stable while new payments arrive. */
@Injectable()
export class PaymentHistoryService {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async page<T>(
    scope: Prisma.PaymentWhereInput,
    request: PageRequest,
    view: (row: PaymentItemRow) => T,
  ): Promise<Page<T>> {
    const rows = await this.db.prisma.payment.findMany({
      where: { AND: [scope, PAID, request.after ? olderThan(request.after) : {}] },
      orderBy: [{ confirmedAt: 'desc' }, { id: 'desc' }],
      // One more than asked tells whether another page follows, without a count.
      take: request.limit + 1,
      select: PAYMENT_ITEM_COLUMNS,
    });
    const items = rows.slice(0, request.limit);
    const last = items.at(-1);
    const hasMore = rows.length > request.limit && last !== undefined;
    return {
      items: items.map(view),
      next_cursor: hasMore ? encodeCursor({ at: last.confirmedAt!, id: last.id }) : null,
    };
  }
}

function olderThan(cursor: Cursor): Prisma.PaymentWhereInput {
  return { OR: [{ confirmedAt: { lt: cursor.at } }, { confirmedAt: cursor.at, id: { lt: cursor.id } }] };
}
