// Unit tests beside each module; the tests against the real API, chain and servers are in apps/e2e.
module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'mcp',
  rootDir: __dirname,
};
