-- The SHA-256 of the signed gate id a payment was made through. A gate whose MAC no longer
-- verifies (its secret revoked or retired since) is still answered to its payer, who holds that id;
-- its terms alone are public (histories, calldata), so they must not be enough. Rows from before
-- this column have none: such a gate is then answered only while its MAC verifies.

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "gate_id_sha256" CHAR(64);
