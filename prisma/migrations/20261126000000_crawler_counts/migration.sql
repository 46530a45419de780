-- Crawler analytics: what the middleware reports about the requests it classified, as counts per
-- site, UTC day, crawler, action and verification (never a row per request), and each crawler's
-- top paths per day, of which the API keeps at most 20 (the rest are deleted at each report).

-- CreateTable
CREATE TABLE "crawler_daily_counts" (
    "site_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "crawler" VARCHAR(64) NOT NULL,
    "action" VARCHAR(16) NOT NULL,
    "verified" BOOLEAN NOT NULL,
    "category" VARCHAR(64) NOT NULL,
    "operator" VARCHAR(64),
    "requests" BIGINT NOT NULL DEFAULT 0,
    "revenue_micros" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "crawler_daily_counts_pkey" PRIMARY KEY ("site_id","day","crawler","action","verified")
);

-- CreateTable
CREATE TABLE "crawler_daily_paths" (
    "site_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "crawler" VARCHAR(64) NOT NULL,
    "path" VARCHAR(2048) NOT NULL,
    "requests" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "crawler_daily_paths_pkey" PRIMARY KEY ("site_id","day","crawler","path")
);

-- AddForeignKey
ALTER TABLE "crawler_daily_counts" ADD CONSTRAINT "crawler_daily_counts_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "crawler_daily_paths" ADD CONSTRAINT "crawler_daily_paths_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
