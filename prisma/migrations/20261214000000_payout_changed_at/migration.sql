-- When a publisher's payout address last changed: a tx_hash transfer to an address its publisher
-- has replaced pays its gate only if it was mined before the change. Rows written before this
-- column take their last update, the latest the address can have changed.

-- AlterTable
ALTER TABLE "publishers" ADD COLUMN "payout_changed_at" TIMESTAMPTZ(3);

UPDATE "publishers" SET "payout_changed_at" = "updated_at";
