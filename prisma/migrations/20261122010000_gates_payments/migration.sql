-- CreateEnum
CREATE TYPE "GateStatus" AS ENUM ('open', 'settling', 'paid', 'expired');

-- CreateEnum
CREATE TYPE "PaymentMethod" AS ENUM ('authorization', 'transfer');

-- CreateEnum
CREATE TYPE "PaymentStatus" AS ENUM ('submitting', 'submitted', 'confirmed');

-- CreateTable
CREATE TABLE "gates" (
    "id" UUID NOT NULL,
    "site_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "resource" TEXT NOT NULL,
    "price_micros" BIGINT NOT NULL,
    "network" VARCHAR(32) NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "asset" CHAR(42) NOT NULL,
    "pay_to" CHAR(42) NOT NULL,
    "status" "GateStatus" NOT NULL DEFAULT 'open',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "paid_at" TIMESTAMPTZ(3),

    CONSTRAINT "gates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL,
    "gate_id" UUID NOT NULL,
    "site_id" UUID NOT NULL,
    "publisher_id" UUID NOT NULL,
    "url" TEXT NOT NULL,
    "method" "PaymentMethod" NOT NULL,
    "status" "PaymentStatus" NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "asset" CHAR(42) NOT NULL,
    "payer" CHAR(42) NOT NULL,
    "pay_to" CHAR(42) NOT NULL,
    "amount" BIGINT NOT NULL,
    "nonce" CHAR(66),
    "tx_hash" CHAR(66),
    "block_number" BIGINT,
    "authorization" JSONB,
    "token_kid" VARCHAR(16),
    "token_issued_at" TIMESTAMPTZ(0),
    "token_expires_at" TIMESTAMPTZ(0),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "confirmed_at" TIMESTAMPTZ(3),

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "site_daily_counts" (
    "site_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "gates_created" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "site_daily_counts_pkey" PRIMARY KEY ("site_id","day")
);

-- CreateIndex
CREATE INDEX "gates_site_id_created_at_idx" ON "gates"("site_id", "created_at");

-- CreateIndex
CREATE INDEX "gates_status_expires_at_idx" ON "gates"("status", "expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "payments_gate_id_key" ON "payments"("gate_id");

-- CreateIndex
CREATE INDEX "payments_payer_created_at_idx" ON "payments"("payer", "created_at");

-- CreateIndex
CREATE INDEX "payments_site_id_created_at_idx" ON "payments"("site_id", "created_at");

-- CreateIndex
CREATE INDEX "payments_status_created_at_idx" ON "payments"("status", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "payments_chain_id_tx_hash_key" ON "payments"("chain_id", "tx_hash");

-- CreateIndex
CREATE UNIQUE INDEX "payments_chain_id_asset_payer_nonce_key" ON "payments"("chain_id", "asset", "payer", "nonce");

-- AddForeignKey
ALTER TABLE "gates" ADD CONSTRAINT "gates_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "site_daily_counts" ADD CONSTRAINT "site_daily_counts_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
