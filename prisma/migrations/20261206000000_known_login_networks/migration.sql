-- Networks each account logged in from with its password, for 30 days: a login from one is
-- counted for that network only, so strangers guessing from many networks, who block every other
-- login to the account, do not lock its owner out. Keys are SHA-256 hashes; a row is deleted once
-- it expired, and an account's rows when its password changes.

-- CreateTable
CREATE TABLE "known_login_networks" (
    "key_hash" CHAR(64) NOT NULL,
    "account_hash" CHAR(64) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "known_login_networks_pkey" PRIMARY KEY ("key_hash")
);

-- CreateIndex
CREATE INDEX "known_login_networks_account_hash_idx" ON "known_login_networks"("account_hash");

-- CreateIndex
CREATE INDEX "known_login_networks_expires_at_idx" ON "known_login_networks"("expires_at");
