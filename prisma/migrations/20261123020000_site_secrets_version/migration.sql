-- A site's secrets change only through rotation, which bumps this version in the same transaction:
-- every API instance reads it with the site (one row it reads anyway) and keeps its decrypted
-- secrets only while the version is the one they were read at, so a rotation is seen everywhere at once.

-- AlterTable
ALTER TABLE "sites" ADD COLUMN "secrets_version" INTEGER NOT NULL DEFAULT 0;
