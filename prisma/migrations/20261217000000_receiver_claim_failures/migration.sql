-- A receiver whose own claim or settle reverts in every claimer run (a payout address the token
-- refuses, say) no longer stops the claimer's heartbeat, and with it vouchers on every site: the
-- run counts for the others, and the receiver's failure is kept here, so vouchers to it alone are
-- refused once it has lasted too long. Keyed by the escrow and claim authorizer that claim it.

-- CreateTable
CREATE TABLE "receiver_claim_failures" (
    "id" UUID NOT NULL,
    "chain_id" INTEGER NOT NULL,
    "escrow" CHAR(42) NOT NULL,
    "receiver_authorizer" CHAR(42) NOT NULL,
    "receiver" CHAR(42) NOT NULL,
    "token" CHAR(42) NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "interval_ms" INTEGER NOT NULL,

    CONSTRAINT "receiver_claim_failures_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "receiver_claim_failures_key" ON "receiver_claim_failures"("chain_id", "escrow", "receiver_authorizer", "receiver", "token");
