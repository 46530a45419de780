-- A settle is written down once it is signed, before it is broadcast (with the relayer nonce it
-- takes and the claims it sends on), and marked landed once mined: a settle sent before the API
-- restarted, or by another instance, is waited for rather than sent again, and the claims it sent
-- on are marked settled by it when it lands.

-- CreateTable
CREATE TABLE "channel_settles" (
    "id" UUID NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "receiver" CHAR(42) NOT NULL,
    "token" CHAR(42) NOT NULL,
    "tx_hash" CHAR(66) NOT NULL,
    "nonce" INTEGER NOT NULL,
    "claim_ids" JSONB NOT NULL,
    "landed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channel_settles_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "channel_settles_chain_id_tx_hash_key" ON "channel_settles"("chain_id", "tx_hash");

-- CreateIndex
CREATE INDEX "channel_settles_chain_id_receiver_token_idx" ON "channel_settles"("chain_id", "receiver", "token");
