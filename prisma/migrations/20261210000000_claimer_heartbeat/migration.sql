-- When a claimer last finished a whole run, shared by every API instance on the database. A voucher
-- is money only once a claim collects it: a payer that withdraws first gets back what it paid for
-- pages already served. So an instance takes vouchers only while some instance's claimer (its own,
-- or another's when its CLAIM_INTERVAL_MS is 0) has finished a run recently; one row per job.

-- CreateTable
CREATE TABLE "job_heartbeats" (
    "job" TEXT NOT NULL,
    "completed_at" TIMESTAMPTZ(3) NOT NULL,
    "interval_ms" INTEGER NOT NULL,

    CONSTRAINT "job_heartbeats_pkey" PRIMARY KEY ("job")
);
