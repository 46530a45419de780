// Every jest project; `npm test` runs each through Nx (`jest --selectProjects <name>`). DATABASE_URL selects PostgreSQL for the API suites; unset, PGlite.
module.exports = {
  projects: [
    '<rootDir>/libs/core',
    '<rootDir>/libs/devchain',
    '<rootDir>/libs/middleware',
    '<rootDir>/libs/publisher-sdk',
    '<rootDir>/libs/agent-sdk',
    '<rootDir>/libs/mcp',
    '<rootDir>/apps/api',
    '<rootDir>/apps/e2e',
    '<rootDir>/apps/dashboard',
    '<rootDir>/tools',
  ],
  maxWorkers: 2,
  // A global option (ignored in project configs): PGlite start-up and chain round trips on 2 cores.
  testTimeout: 30_000,
};
