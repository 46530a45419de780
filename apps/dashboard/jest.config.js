// The dashboard's pure modules, a unit test beside each; its browser tests (Chromium against the
// built dashboard, a real API and the local chain) are in apps/e2e/dashboard.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'dashboard',
  rootDir: __dirname,
};
