// Agent tests pay real gated sites through the real API and local chain: the API suites' global set-up.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'agent-sdk',
  rootDir: __dirname,
  globalSetup: '<rootDir>/../../apps/api/test/global-setup.ts',
  globalTeardown: '<rootDir>/../../apps/api/test/global-teardown.ts',
};
