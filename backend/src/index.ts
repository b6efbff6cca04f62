export { startBackend, type RunningBackend } from './backend';
export { type BackendOptions, type BackendConfig, ConfigError, parseConfig } from './config/config';
export { createDataSource, MIGRATIONS } from './database/data-source';
export { migrateUp, migrateDown, appliedMigrations } from './database/migrate';
export { startEmbeddedPostgres, type EmbeddedDatabase } from './database/embedded';
export type { EndpointVersionResponse } from './endpoints/endpoints.service';
