-- x402 batch-settlement (issue 14): a site switch for offering it, voucher payments (one per
-- voucher: a channel and a cumulative total), the channels vouchers were taken on, and the
-- claimer's claim transactions.

-- AlterEnum
ALTER TYPE "PaymentMethod" ADD VALUE 'voucher';

-- AlterTable
ALTER TABLE "sites" ADD COLUMN "batch_settlement" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "channel_id" CHAR(66),
ADD COLUMN "cumulative_amount" BIGINT;

-- CreateIndex
CREATE UNIQUE INDEX "payments_channel_id_cumulative_amount_key" ON "payments"("channel_id", "cumulative_amount");

-- CreateTable
CREATE TABLE "payment_channels" (
    "channel_id" CHAR(66) NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "escrow" CHAR(42) NOT NULL,
    "payer" CHAR(42) NOT NULL,
    "payer_authorizer" CHAR(42) NOT NULL,
    "receiver" CHAR(42) NOT NULL,
    "receiver_authorizer" CHAR(42) NOT NULL,
    "token" CHAR(42) NOT NULL,
    "withdraw_delay" INTEGER NOT NULL,
    "salt" CHAR(66) NOT NULL,
    "charged" BIGINT NOT NULL,
    "signature" TEXT,
    "claimed" BIGINT NOT NULL DEFAULT 0,
    "unclaimed_since" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_channels_pkey" PRIMARY KEY ("channel_id")
);

-- CreateIndex
CREATE INDEX "payment_channels_receiver_token_unclaimed_since_idx" ON "payment_channels"("receiver", "token", "unclaimed_since");

-- CreateTable
CREATE TABLE "channel_claims" (
    "id" UUID NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "receiver" CHAR(42) NOT NULL,
    "token" CHAR(42) NOT NULL,
    "tx_hash" CHAR(66) NOT NULL,
    "channels" INTEGER NOT NULL,
    "amount" BIGINT NOT NULL,
    "settle_tx_hash" CHAR(66),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channel_claims_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "channel_claims_chain_id_tx_hash_key" ON "channel_claims"("chain_id", "tx_hash");
