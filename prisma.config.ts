import { defineConfig } from 'prisma/config';

// The URL only matters for Prisma CLI commands that touch a database; `generate` does not.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test' },
});
