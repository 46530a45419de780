-- DropIndex
DROP INDEX "payments_payer_created_at_idx";

-- DropIndex
DROP INDEX "payments_site_id_created_at_idx";

-- CreateIndex
CREATE INDEX "payments_payer_confirmed_at_id_idx" ON "payments"("payer", "confirmed_at", "id");

-- CreateIndex
CREATE INDEX "payments_site_id_confirmed_at_id_idx" ON "payments"("site_id", "confirmed_at", "id");
