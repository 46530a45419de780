-- CreateTable
CREATE TABLE "publishers" (
    "id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "name" TEXT,
    "api_key_hash" CHAR(64) NOT NULL,
    "payout_address" CHAR(42),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "publishers_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "sites" (
    "id" UUID NOT NULL,
    "publisher_id" UUID NOT NULL,
    "domain" TEXT NOT NULL,
    "name" TEXT,
    "site_token_hash" CHAR(64) NOT NULL,
    "default_price_micros" BIGINT NOT NULL DEFAULT 0,
    "pricing_version" INTEGER NOT NULL DEFAULT 0,
    "pricing_updated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sites_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "price_rules" (
    "site_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "pattern" TEXT NOT NULL,
    "price_micros" BIGINT NOT NULL,

    CONSTRAINT "price_rules_pkey" PRIMARY KEY ("site_id","position")
);

-- CreateTable
CREATE TABLE "site_secrets" (
    "site_id" UUID NOT NULL,
    "kid" VARCHAR(16) NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retires_at" TIMESTAMPTZ(3),

    CONSTRAINT "site_secrets_pkey" PRIMARY KEY ("site_id","kid")
);

-- CreateIndex
CREATE UNIQUE INDEX "publishers_email_key" ON "publishers"("email");

-- CreateIndex
CREATE UNIQUE INDEX "publishers_api_key_hash_key" ON "publishers"("api_key_hash");

-- CreateIndex
CREATE UNIQUE INDEX "sites_site_token_hash_key" ON "sites"("site_token_hash");

-- CreateIndex
CREATE UNIQUE INDEX "sites_publisher_id_domain_key" ON "sites"("publisher_id", "domain");

-- AddForeignKey
ALTER TABLE "sites" ADD CONSTRAINT "sites_publisher_id_fkey" FOREIGN KEY ("publisher_id") REFERENCES "publishers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "price_rules" ADD CONSTRAINT "price_rules_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "site_secrets" ADD CONSTRAINT "site_secrets_site_id_fkey" FOREIGN KEY ("site_id") REFERENCES "sites"("id") ON DELETE CASCADE ON UPDATE CASCADE;
