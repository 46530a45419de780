// Bundles the API with tsup: our workspace libs are inlined, node_modules stay external.
// tsup switches to swc when emitDecoratorMetadata is on, which NestJS's dependency injection needs.
import { build } from 'tsup';

await build({
  entry: { main: 'apps/api/src/main.ts', migrate: 'apps/api/src/migrate.ts' },
  outDir: 'dist/apps/api',
  format: ['cjs'],
  platform: 'node',
  target: 'node20',
  tsconfig: 'apps/api/tsconfig.app.json',
  skipNodeModulesBundle: true,
  noExternal: [/^@crawlgate\//],
  sourcemap: true,
  clean: true,
  silent: true,
});
