// Builds the dashboard into dist/apps/dashboard; the API serves it at /dashboard/.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/dashboard/',
  // The dashboard uses our own libraries from source: one price parser, one glob compiler, one API client.
  resolve: {
    alias: {
      '@crawlgate/core': here('../../libs/core/src/index.ts'),
      '@crawlgate/publisher': here('../../libs/publisher-sdk/src/index.ts'),
    },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: process.env.CRAWLGATE_DASHBOARD_OUT ?? here('../../dist/apps/dashboard'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 300,
  },
  logLevel: 'warn',
});
