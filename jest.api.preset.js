// For projects whose tests run against the real API and local chain (the API's own, and the
// packages that talk to it): jest.preset.js plus the API suites' global set-up, one chain per
// worker and a migrated PGlite template, prepared once for all of them.
const path = require('node:path');

module.exports = {
  ...require('./jest.preset.js'),
  globalSetup: path.join(__dirname, 'apps/api/test/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'apps/api/test/global-teardown.ts'),
};
