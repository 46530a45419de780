-- A claim is written down once it is signed, before it is broadcast (with the relayer nonce it
-- takes), and marked landed once mined: a claim sent before the API restarted, or by another
-- instance, is waited for rather than sent again, and recorded when it lands. Rows written before
-- this column were written once their claim had landed.

-- AlterTable
ALTER TABLE "channel_claims" ADD COLUMN "nonce" INTEGER,
ADD COLUMN "landed_at" TIMESTAMPTZ(3);

UPDATE "channel_claims" SET "landed_at" = "created_at";

-- CreateIndex
CREATE INDEX "channel_claims_chain_id_receiver_token_idx" ON "channel_claims"("chain_id", "receiver", "token");
