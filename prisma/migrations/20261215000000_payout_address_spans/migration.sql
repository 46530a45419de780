-- The spans of time during which each address was a publisher's payout address, in place of the
-- time of its last change alone: a tx_hash transfer to an address its publisher has replaced pays
-- its gate only if it was mined while the address was the payout address. With the last change
-- alone, a transfer mined after a first change (A to B) paid once a second one (B to C) was later.
-- A publisher's current address is taken as its payout address since the publisher was created.

-- CreateTable
CREATE TABLE "payout_address_spans" (
    "id" UUID NOT NULL,
    "publisher_id" UUID NOT NULL,
    "address" CHAR(42) NOT NULL,
    "from_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "until_at" TIMESTAMPTZ(3),

    CONSTRAINT "payout_address_spans_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "payout_address_spans_publisher_id_address_idx" ON "payout_address_spans"("publisher_id", "address");

INSERT INTO "payout_address_spans" ("id", "publisher_id", "address", "from_at")
SELECT gen_random_uuid(), "id", lower("payout_address"), "created_at" FROM "publishers" WHERE "payout_address" IS NOT NULL;

-- AlterTable
ALTER TABLE "publishers" DROP COLUMN "payout_changed_at";
