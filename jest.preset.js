// Shared jest settings: swc transforms TypeScript with decorator metadata (NestJS DI needs it),
// and also NestJS 12 / PGlite inside node_modules, which ship ESM that jest 30 on Node 20 cannot load.
const path = require('node:path');

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: path.join(__dirname, 'tools/testing/jest-environment.ts'),
  transform: { '^.+\\.(ts|js|mjs|cjs)$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|@electric-sql|content-disposition)/)'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  moduleNameMapper: {
    '^@crawlgate/core$': path.join(__dirname, 'libs/core/src/index.ts'),
    '^@crawlgate/devchain$': path.join(__dirname, 'libs/devchain/src/index.ts'),
    '^@crawlgate/middleware$': path.join(__dirname, 'libs/middleware/src/index.ts'),
    '^@crawlgate/middleware/(.*)$': path.join(__dirname, 'libs/middleware/src/adapters/$1.ts'),
    '^@crawlgate/agent$': path.join(__dirname, 'libs/agent-sdk/src/index.ts'),
    '^@crawlgate/mcp$': path.join(__dirname, 'libs/mcp/src/index.ts'),
    '^@crawlgate/publisher$': path.join(__dirname, 'libs/publisher-sdk/src/index.ts'),
  },
  testMatch: ['**/*.spec.ts'],
};
