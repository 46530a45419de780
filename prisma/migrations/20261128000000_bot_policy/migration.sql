-- A site's bot policy: per category and per crawler what its middleware does (allow, charge, block),
-- and which crawlers must sign their requests (Web Bot Auth). One row per site, written by
-- PUT /v1/sites/{id}/bot-policy and its per-crawler routes, read by the middleware with the pricing
-- (GET /v1/site). No row until first set: the middleware's defaults apply. The JSON holds only
-- what @crawlgate/core's botPolicyInputProblems accepts, names in the catalogue's spelling.

-- CreateTable
CREATE TABLE "bot_policies" (
    "site_id" UUID NOT NULL,
    "categories" JSONB NOT NULL,
    "bots" JSONB NOT NULL,
    "require_signature" JSONB NOT NULL,
    "version" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "bot_policies_pkey" PRIMARY KEY ("site_id")
);

-- AddForeignKey
ALTER TABLE "bot_policies" ADD CONSTRAINT "bot_policies_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
