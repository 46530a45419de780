// The benchmark harness's own logic (how a figure is judged), beside its modules; the benchmarks themselves run with `npm run bench`.
module.exports = {
  ...require('../jest.preset.js'),
  displayName: 'tools',
  rootDir: __dirname,
  testMatch: ['<rootDir>/bench/**/*.spec.ts'],
};
