-- A crawler's top paths keep the requests it was verified on apart from those strangers made under
-- its name (which any client can claim): the paths of each are ranked and kept on their own, so a
-- stranger's 402s never push out the paths a crawler was verified on. Rows before this are taken
-- as not verified.

-- AlterTable
ALTER TABLE "crawler_daily_paths" ADD COLUMN "verified" BOOLEAN NOT NULL DEFAULT false;

-- AlterPrimaryKey
ALTER TABLE "crawler_daily_paths" DROP CONSTRAINT "crawler_daily_paths_pkey";
ALTER TABLE "crawler_daily_paths" ADD CONSTRAINT "crawler_daily_paths_pkey" PRIMARY KEY ("site_id", "day", "crawler", "verified", "path");
