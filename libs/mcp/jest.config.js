// The server's tests drive it with a real MCP client while its agent pays real gated sites
// through the real API and local chain.
module.exports = {
  ...require('../../jest.api.preset.js'),
  displayName: 'mcp',
  rootDir: __dirname,
};
