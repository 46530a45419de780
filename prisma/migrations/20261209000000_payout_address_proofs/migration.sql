-- A payout address is named by one publisher, unless each publisher naming it proved it holds the
-- address's key (an EIP-191 signature of core's payoutProofMessage): a payer's signature names the
-- address it pays, not the site, so two publishers of one address could spend each other's payers'
-- payments. Addresses named by several publishers before this change stay as they are until one of
-- them proves control, which takes the address from those that did not.

-- AlterTable
ALTER TABLE "publishers" ADD COLUMN "payout_address_proven" BOOLEAN NOT NULL DEFAULT false;
