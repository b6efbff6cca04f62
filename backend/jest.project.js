module.exports = {
  // @nestjs/* 12 ship ESM only: let swc turn them into CommonJS for jest (Node 20 jest cannot require ESM).
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs)/)'],
  // Integration tests start real servers and PostgreSQL databases on a shared 2-core machine.
  testTimeout: 30_000,
};
