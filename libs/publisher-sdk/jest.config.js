// The client and CLI are tested against the real API in-process.
module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'publisher-sdk',
  rootDir: __dirname,
};
