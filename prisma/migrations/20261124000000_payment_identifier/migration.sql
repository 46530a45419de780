-- x402 payment-identifier: a client's idempotency id is kept with the payment it came with, with a
-- fingerprint of that payment (gate ref + canonical payload). Unique per site and payer: the same
-- id from another payer or on another site is another key, so nobody reads or blocks another's
-- answers. NULLs are distinct, so payments without an id are unaffected.

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "payment_identifier" VARCHAR(128),
ADD COLUMN "payment_fingerprint" CHAR(64);

-- CreateIndex
CREATE UNIQUE INDEX "payments_site_id_payer_payment_identifier_key" ON "payments"("site_id", "payer", "payment_identifier");
