-- A payer's relayed deposit and its exact settlements move the same USDC, each by an EIP-3009
-- authorization, and each path judged the payer's balance without the other's in flight: a payer
-- holding enough for one had both sent, and one reverted at the relayer's cost. A lease now names
-- its deposit's amount and the end of its authorization, so an exact claim counts the deposit in
-- flight (until it lands, which its nonce tells, or can no longer land). Leases taken before this
-- migration have neither and are not counted (a deposit in flight during the upgrade, at most).

-- AlterTable
ALTER TABLE "deposit_leases" ADD COLUMN "amount" BIGINT,
ADD COLUMN "valid_before" TIMESTAMPTZ(3);
