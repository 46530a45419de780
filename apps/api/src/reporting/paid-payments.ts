import { Prisma } from '../generated/prisma/client';

/*
 * What reporting counts as paid: confirmed on chain. Submitted payments may still fail, so they
 * show nowhere. The same rule for Prisma queries and for raw SQL.
 */
export const PAID = { status: 'confirmed', confirmedAt: { not: null } } satisfies Prisma.PaymentWhereInput;
export const PAID_SQL = Prisma.sql`status = 'confirmed' AND confirmed_at IS NOT NULL`;
