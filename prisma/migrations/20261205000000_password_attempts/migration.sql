-- Password attempts (logins, password confirmations) counted in the database, shared by every
-- instance and kept through restarts and Redis outages: the budget against guessing a password
-- must not grow with the number of instances, nor reset when Redis does. A row per counter (the
-- SHA-256 of its key), deleted once its window and any block are over.

-- CreateTable
CREATE TABLE "password_attempts" (
    "key_hash" CHAR(64) NOT NULL,
    "hits" INTEGER NOT NULL,
    "window_ends" TIMESTAMPTZ(3) NOT NULL,
    "blocked_until" TIMESTAMPTZ(3),

    CONSTRAINT "password_attempts_pkey" PRIMARY KEY ("key_hash")
);

-- CreateIndex
CREATE INDEX "password_attempts_window_ends_idx" ON "password_attempts"("window_ends");
