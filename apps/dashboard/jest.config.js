// The dashboard's pure modules (unit tests beside each) and its browser tests (test/), which
// drive Debian's Chromium against the built dashboard served by a real API on the local chain.
module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'dashboard',
  rootDir: __dirname,
};
