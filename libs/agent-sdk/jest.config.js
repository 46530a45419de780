// Agent tests pay real gated sites through the real API and local chain.
module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'agent-sdk',
  rootDir: __dirname,
};
