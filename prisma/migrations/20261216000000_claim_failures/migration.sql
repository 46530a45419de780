-- A receiver whose claims fail every claimer run no longer stops the claimer's heartbeat (and with
-- it vouchers on every site): the run counts for the others, and the receiver's failures are kept
-- here, so vouchers to it alone are refused once they have lasted too long.

-- CreateTable
CREATE TABLE "claim_failures" (
    "id" UUID NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "receiver" CHAR(42) NOT NULL,
    "token" CHAR(42) NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "interval_ms" INTEGER NOT NULL,

    CONSTRAINT "claim_failures_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "claim_failures_chain_id_receiver_token_key" ON "claim_failures"("chain_id", "receiver", "token");
