// Every jest project; `npm test` runs each through Nx (`jest --selectProjects <name>`). DATABASE_URL selects PostgreSQL for the API suites; unset, PGlite.
const { availableParallelism } = require('node:os');

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
  // One and a half workers a core: a spec waits on the chain, the database and timers for a good
  // part of its time, and a third worker on 2 cores fills it (the API suite on PGlite, 2 workers
  // then 3: 200-221 s then 171 s, its CPU time no higher). Each worker has a chain of its own.
  maxWorkers: Math.max(2, Math.floor(availableParallelism() * 1.5)),
  // A global option (ignored in project configs): PGlite start-up and chain round trips on 2 cores.
  testTimeout: 30_000,
};
