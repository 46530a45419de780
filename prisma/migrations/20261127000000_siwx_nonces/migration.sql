-- x402 sign-in-with-x: the nonces of proofs already honoured, so each proof reads a page once. The
-- challenges themselves are not stored (their nonces are MAC'ed with the site's secret); a row
-- lives until its nonce expires, after which the nonce is refused anyway and the row is deleted.

-- CreateTable
CREATE TABLE "siwx_nonces" (
    "nonce" VARCHAR(128) NOT NULL,
    "site_id" UUID NOT NULL,
    "expires_at" TIMESTAMPTZ(0) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "siwx_nonces_pkey" PRIMARY KEY ("nonce")
);

-- CreateIndex
CREATE INDEX "siwx_nonces_expires_at_idx" ON "siwx_nonces"("expires_at");

-- AddForeignKey
ALTER TABLE "siwx_nonces" ADD CONSTRAINT "siwx_nonces_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
