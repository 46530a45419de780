// Generates the Prisma client offline. Prisma's schema engine cannot be downloaded on our
// machines and generate does not need it; /bin/false makes any accidental migrate fail loudly.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('prisma/schema.prisma')) process.exit(0);
execFileSync(process.execPath, ['node_modules/prisma/build/index.js', 'generate'], {
  stdio: 'inherit',
  env: {
    ...process.env,
    PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? '/bin/false',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
  },
});
