-- A pending withdrawal that a read of its channel, at a block the escrow's log was read through,
-- found taking nothing charged (a unit asked back and never finalized): the block, and the charge
-- the verdict covers. The claimer no longer counts such a channel withdrawing (read at every run,
-- outside its time limit) until a later withdrawal event or a charge above that; kept here, the
-- verdict outlives a restart and holds for every instance. Channels before this migration have
-- none: each is read once more.

-- AlterTable
ALTER TABLE "payment_channels" ADD COLUMN "harmless_withdrawal_block" BIGINT,
ADD COLUMN "harmless_withdrawal_covers" BIGINT;
