-- The highest voucher total a claim transaction of ours carried: claim calldata is public, so a
-- voucher up to that total proves nothing about who sends it (no refund with it, and the corrective
-- 402 tells the payer's last voucher only to a request above it). Rows from before count what the
-- chain shows claimed.

-- AlterTable
ALTER TABLE "payment_channels" ADD COLUMN "published" BIGINT NOT NULL DEFAULT 0;
UPDATE "payment_channels" SET "published" = "claimed";
