// Middleware tests run real servers against the real API and local chain.
module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'middleware',
  rootDir: __dirname,
};
