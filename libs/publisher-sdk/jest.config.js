// The client and CLI are tested against the real API in-process, so this project shares the API
// suites' global set-up (one chain per worker, a migrated PGlite template).
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'publisher-sdk',
  rootDir: __dirname,
  globalSetup: '<rootDir>/../../apps/api/test/global-setup.ts',
  globalTeardown: '<rootDir>/../../apps/api/test/global-teardown.ts',
};
