-- One transfer pays one gate, not one transaction: a stranger may settle several people's
-- authorizations in one multicall, and each pays its own gate. Payments are unique by the Transfer
-- log that paid them. A transaction whose payment was recorded before this column has no log
-- index; the API pays no further gate with such a transaction.

-- AlterTable
ALTER TABLE "payments" ADD COLUMN "transfer_log_index" INTEGER;

-- DropIndex
DROP INDEX "payments_chain_id_tx_hash_key";

-- CreateIndex
CREATE UNIQUE INDEX "payments_chain_id_tx_hash_transfer_log_index_key" ON "payments"("chain_id", "tx_hash", "transfer_log_index");
