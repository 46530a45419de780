module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'api',
  rootDir: __dirname,
};
