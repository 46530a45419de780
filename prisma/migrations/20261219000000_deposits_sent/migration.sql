-- A batch-settlement deposit the relayer sends for a payer is written down once signed, before its
-- broadcast (its hash, relayer nonce, the channel and payer it is for, when it was sent), as claims,
-- settles and refunds are: stuck under the chain's fees it holds every later relayer transaction
-- behind its nonce, so it is re-priced like them (the refund holds' sweep, and up to the urgent
-- maximum ahead of an urgent claim), each replacement a row at the same nonce. Deposits sent before
-- this table are recorded nowhere: they are left as they were. It keeps the payer's ERC-3009
-- authorization nonce the deposit spends: one that reverted while that authorization was spent was
-- beaten by a copy (the escrow's deposit is anyone's to call), and its payer is not to blame.

-- CreateTable
CREATE TABLE "channel_deposits" (
    "id" UUID NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "channel_id" CHAR(66) NOT NULL,
    "payer" CHAR(42) NOT NULL,
    "authorization_nonce" CHAR(66) NOT NULL,
    "tx_hash" CHAR(66) NOT NULL,
    "nonce" INTEGER NOT NULL,
    "landed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "channel_deposits_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "channel_deposits_chain_id_tx_hash_key" ON "channel_deposits"("chain_id", "tx_hash");

-- CreateIndex
CREATE INDEX "channel_deposits_chain_id_landed_at_idx" ON "channel_deposits"("chain_id", "landed_at");
