// Middleware tests run real servers against the real API and local chain, so they share the
// API suites' global set-up (one chain per worker, a migrated PGlite template).
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'middleware',
  rootDir: __dirname,
  globalSetup: '<rootDir>/../../apps/api/test/global-setup.ts',
  globalTeardown: '<rootDir>/../../apps/api/test/global-teardown.ts',
};
