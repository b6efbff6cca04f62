// One jest run for the whole workspace; each package is a project so it can have its own setup.
// Sources are transformed by swc (no type-checking here: `npm run typecheck` does that once).
const fs = require('node:fs');
const path = require('node:path');
const swc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swc.$schema;

/** @param {string} name @param {object} extra */
function project(name, extra = {}) {
  return {
    displayName: name,
    rootDir: path.join(__dirname, name),
    testEnvironment: 'node',
    transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { ...swc, swcrc: false }] },
    moduleNameMapper: {
      '^@spectator/(shared|agent|backend)$': path.join(__dirname, '$1/src/index.ts'),
      // Indexes that load a whole library for a few of its exports, each export loaded on first use
      // (scripts/jest-lazy/barrel.js; `SPECTATOR_JEST_LAZY_INDEXES=off` loads them whole, to compare).
      ...(process.env.SPECTATOR_JEST_LAZY_INDEXES === 'off'
        ? {}
        : {
            '^es-toolkit/compat$': path.join(__dirname, 'scripts/jest-lazy/es-toolkit-compat.js'),
            '^rxjs$': path.join(__dirname, 'scripts/jest-lazy/rxjs.js'),
            '^rxjs/operators$': path.join(__dirname, 'scripts/jest-lazy/rxjs-operators.js'),
          }),
    },
    // class-validator's decorators, each loaded on first use (scripts/jest-lazy/resolver.js), with the indexes above.
    ...(process.env.SPECTATOR_JEST_LAZY_INDEXES === 'off'
      ? {}
      : { resolver: path.join(__dirname, 'scripts/jest-lazy/resolver.js') }),
    testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.test.ts', '<rootDir>/test/**/*.test.tsx'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    // jest's runtime with V8's code cache kept across test files: each module is compiled once a run.
    runtime: path.join(__dirname, 'scripts/jest-runtime.js'),
    ...extra,
  };
}

module.exports = {
  // With SPECTATOR_JEST_TIMELINE=<file> (.ci/run sets it), each test file's wall time and whose CPU it went to
  // are written there as the files end (scripts/jest-timeline.js).
  ...(process.env.SPECTATOR_JEST_TIMELINE
    ? { reporters: ['default', path.join(__dirname, 'scripts/jest-timeline.js')] }
    : {}),
  // One embedded PostgreSQL per test run (unless DATABASE_URL is set); each test file makes its own database.
  globalSetup: path.join(__dirname, 'backend/test/support/global-setup.ts'),
  globalTeardown: path.join(__dirname, 'backend/test/support/global-teardown.ts'),
  projects: ['shared', 'agent', 'backend', 'dashboard', 'deploy', 'bench/reconstruct'].map((name) =>
    project(name, require(`./${name}/jest.project.js`)),
  ),
};
