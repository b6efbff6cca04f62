const path = require('node:path');

// Shared's timeout is set per test file (see test/support/jest-timeout.ts: `testTimeout` here would be ignored).
module.exports = { setupFilesAfterEnv: [path.join(__dirname, 'test/support/jest-timeout.ts')] };
