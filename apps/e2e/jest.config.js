// The published packages driven from outside: real framework servers, the real API in-process,
// the local chain, packed tarballs. Kept out of the libraries so no published lib depends on the app.
module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'e2e',
  rootDir: __dirname,
};
