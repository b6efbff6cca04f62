// The dashboard's browser tests start the real backend from its sources, so they load its
// dependencies the way the backend's own tests do (NestJS 12 ships ESM that must be transformed).
const backend = require('../backend/jest.project.js');

module.exports = { transformIgnorePatterns: backend.transformIgnorePatterns };
