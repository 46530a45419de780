-- A payout address is named by one publisher, unless each publisher naming it proved it holds the
-- address's key (an EIP-191 or ERC-1271 signature of core's payoutProofMessage): a payer's signature
-- names the address it pays, not the site, so two publishers of one address could spend each
-- other's payers' payments.

-- AlterTable
ALTER TABLE "publishers" ADD COLUMN "payout_address_proven" BOOLEAN NOT NULL DEFAULT false;

-- An address several publishers named before had no proof: none of them keeps it. Each names it
-- again (the first without a proof, the others with one); meanwhile their sites cannot charge.
UPDATE "publishers" SET "payout_address" = NULL
 WHERE lower("payout_address") IN (
   SELECT lower("payout_address") FROM "publishers"
    WHERE "payout_address" IS NOT NULL
    GROUP BY lower("payout_address")
   HAVING count(*) > 1
 );
