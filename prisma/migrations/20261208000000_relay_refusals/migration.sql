-- Payers whose settlement or deposit, sent by our relayer, reverted on chain: their authorizations
-- are not relayed until refused_until. A payer can make what the relayer sends for it revert (a
-- contract wallet's signature check that passes simulations only, funds or code moved ahead of the
-- relayer's transaction), each revert at our gas and none of its own; once is all it gets.

-- CreateTable
CREATE TABLE "relay_refusals" (
    "chain_id" INTEGER NOT NULL,
    "payer" CHAR(42) NOT NULL,
    "refused_until" TIMESTAMPTZ(3) NOT NULL,
    "reverted_tx_hash" CHAR(66) NOT NULL,

    CONSTRAINT "relay_refusals_pkey" PRIMARY KEY ("chain_id","payer")
);

-- CreateIndex
CREATE INDEX "relay_refusals_refused_until_idx" ON "relay_refusals"("refused_until");
