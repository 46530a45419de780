-- The reconciler takes the open payments it checked least recently first, so rows that stay open
-- (a settlement it cannot finish yet) never keep it from the others.

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "checked_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "payments_status_checked_at_idx" ON "payments"("status", "checked_at");
