-- What the refund holding a channel asked for. A refund whose transaction failed is sent again when
-- asked again, and its voucher is then public (the failed transaction's calldata): a request sending
-- it again could ask for 1 unit and use the refund up. It is sent again for what it first asked.
-- Holds taken before this column (null) are sent again for what the request asks, as before.

-- AlterTable
ALTER TABLE "payment_channels" ADD COLUMN "refund_amount" BIGINT;
