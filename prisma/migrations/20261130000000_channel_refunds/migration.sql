-- Cooperative refunds of batch-settlement channels (x402's refund payload): the refund that holds a
-- channel while its transaction is in flight (vouchers wait for it), its transaction once signed
-- (stored before it is broadcast), the voucher total the last refund used up, and the chain's
-- refund nonce after the last refund landed (a voucher judged against older chain state is not taken).

-- AlterTable
ALTER TABLE "payment_channels" ADD COLUMN "refund_id" UUID,
ADD COLUMN "refund_nonce" BIGINT,
ADD COLUMN "refund_locked_at" TIMESTAMPTZ(3),
ADD COLUMN "refund_tx" CHAR(66),
ADD COLUMN "refund_tx_nonce" INTEGER,
ADD COLUMN "refunded_charged" BIGINT,
ADD COLUMN "refunds_through" BIGINT NOT NULL DEFAULT 0;
