import { join } from 'node:path';
import { build } from 'tsup';

let built: Promise<string> | undefined;

/**
 * api-server.ts bundled the way tools/build-api.mjs bundles the API for `npm start` (tsup with
 * swc for Nest's decorator metadata, our libs inlined, node_modules external), so the API under
 * test runs as it does in production, without a TypeScript loader's time and memory. Built once a run.
 */
export function builtApiServer(): Promise<string> {
  built ??= (async () => {
    const outDir = join(__dirname, '..', '..', 'dist', 'bench'); // in the repository, so node_modules resolve
    await build({
      entry: { 'api-server': join(__dirname, 'api-server.ts') },
      outDir,
      format: ['cjs'],
      platform: 'node',
      target: 'node20',
      tsconfig: 'apps/api/tsconfig.app.json',
      skipNodeModulesBundle: true,
      noExternal: [/^@crawlgate\//],
      silent: true,
      clean: true,
    });
    return join(outDir, 'api-server.js');
  })();
  return built;
}
