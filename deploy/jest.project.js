const path = require('node:path');

// The deploy project: tests of the images, manifests, compose file, CI workflow, docs and `npm start`.
// Their timeout is set in test/support/jest-timeout.ts (`testTimeout` here would be ignored).
module.exports = { setupFilesAfterEnv: [path.join(__dirname, 'test/support/jest-timeout.ts')] };
