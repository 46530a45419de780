-- A relayer transaction stuck under a fee spike is sent again at its nonce with higher fees: the
-- payment keeps every hash broadcast for its settlement, since whichever of them is mined settles
-- it (the others can then never be), and when its current one was sent, to judge it stuck.
-- Rows before this column have no replaced hashes, and no send time (their claim's time stands in).

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "replaced_tx_hashes" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "tx_sent_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "payments_replaced_tx_hashes_idx" ON "payments" USING GIN ("replaced_tx_hashes");
