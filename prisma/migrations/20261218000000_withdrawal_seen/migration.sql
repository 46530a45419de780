-- A channel the claimer has seen a pending withdrawal of (a WithdrawInitiated event, or a read of
-- the channel): it stays among its receiver's withdrawing channels, claimed ahead of the queue and
-- judged for urgent fees, once that event has left the claimer's log window (RECENT_LOG_BLOCKS) or
-- after a restart, until a read shows no withdrawal pending. Channels before this column are judged
-- as before (from the log window) until their next read.

-- AlterTable
ALTER TABLE "payment_channels" ADD COLUMN "withdrawal_seen" BOOLEAN NOT NULL DEFAULT false;
