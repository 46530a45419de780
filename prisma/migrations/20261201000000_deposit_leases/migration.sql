-- x402 batch-settlement deposits, one payer's at a time. The relayer pays a deposit's gas, and
-- deposits of one payer sent at once were each simulated against a chain that had none of the
-- others: all but one reverted, at the relayer's cost, for nothing but the payer's signatures. A
-- lease names the payer's deposit in flight (and its authorization's nonce, so a retry that finds
-- it landed gives the lease back); one left by a process that died is taken once stale.

-- CreateTable
CREATE TABLE "deposit_leases" (
    "payer" CHAR(42) NOT NULL,
    "lease_id" UUID NOT NULL,
    "nonce" CHAR(66) NOT NULL,
    "taken_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "deposit_leases_pkey" PRIMARY KEY ("payer")
);
