-- A payer's relayed deposit and its exact settlements move the same USDC, each by an EIP-3009
-- authorization, and each path judged the payer's balance without the other's in flight: a payer
-- holding enough for one had both sent, and one reverted at the relayer's cost. A deposit's lease
-- (the moments before its broadcast) and each hash sent for it (channel_deposits) now name its
-- amount and the end of its authorization, so an exact claim counts the deposit in flight until it
-- lands (which its nonce tells) or can no longer land, and a node behind a deposit that landed is
-- caught as one behind a settlement is. Rows written before this migration name neither and are
-- not counted (deposits in flight during the upgrade, at most).

-- AlterTable
ALTER TABLE "deposit_leases" ADD COLUMN "amount" BIGINT,
ADD COLUMN "valid_before" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "channel_deposits" ADD COLUMN "amount" BIGINT,
ADD COLUMN "valid_before" TIMESTAMPTZ(3);

-- CreateIndex
CREATE INDEX "channel_deposits_payer_landed_at_idx" ON "channel_deposits"("payer", "landed_at");
