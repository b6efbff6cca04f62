const path = require('node:path');

module.exports = {
  // @nestjs/* 12 ship ESM only: let swc turn them into CommonJS for jest (Node 20 jest cannot require ESM).
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs)/)'],
  setupFilesAfterEnv: [path.join(__dirname, 'test/support/jest-timeout.ts')],
};
