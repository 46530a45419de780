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
  // Three workers: a spec waits on the chain, the database and timers for a good part of its time,
  // and a third worker on CI's 2 cores fills it (the API suite on PGlite, 2 workers then 3: 200-221 s
  // then 171 s, its CPU time no higher; a fourth gained nothing). Not more on bigger machines: each
  // worker has a chain of its own, and its API specs hold up to a few PostgreSQL pools of 10
  // connections each, against the server's default of 100.
  maxWorkers: 3,
  // A global option (ignored in project configs): PGlite start-up and chain round trips on 2 cores.
  testTimeout: 30_000,
};
