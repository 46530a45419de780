module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'devchain',
  rootDir: __dirname,
};
