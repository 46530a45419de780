// `npm test` runs every project. DATABASE_URL selects PostgreSQL for the API suites; unset, PGlite.
module.exports = {
  projects: ['<rootDir>/libs/core', '<rootDir>/libs/devchain', '<rootDir>/apps/api'],
  maxWorkers: 2,
};
