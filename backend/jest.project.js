const path = require('node:path');

module.exports = {
  // @nestjs/* 12, openid-client 6 (with oauth4webapi and jose) and feed 5 ship ESM only: let swc turn them into
  // CommonJS for jest (Node 20 jest cannot require ESM; Node itself can, so the built backend needs no change).
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|openid-client|oauth4webapi|jose|feed)/)'],
  setupFilesAfterEnv: [path.join(__dirname, 'test/support/jest-timeout.ts')],
};
