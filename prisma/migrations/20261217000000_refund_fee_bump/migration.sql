-- A cooperative refund stuck under a fee spike is sent again at its nonce with higher fees (the
-- refund holds' sweep): its hold keeps every hash broadcast for it, since whichever of them is mined
-- is the refund, and when its current one was sent, to judge it stuck. A hold signed before this
-- column takes the time it was taken as its send time; one not signed yet has none.

-- AlterTable
ALTER TABLE "payment_channels" ADD COLUMN "refund_replaced_txs" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "refund_tx_sent_at" TIMESTAMPTZ(3);

UPDATE "payment_channels" SET "refund_tx_sent_at" = "refund_locked_at"
 WHERE "refund_id" IS NOT NULL AND "refund_tx" IS NOT NULL;
