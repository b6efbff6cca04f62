import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { Initial1763770000000 } from './migrations/1763770000000-Initial';
import { Evidence1763800000000 } from './migrations/1763800000000-Evidence';
import { CaptureEndpoints1763900000000 } from './migrations/1763900000000-CaptureEndpoints';
import { AgentConnections1764000000000 } from './migrations/1764000000000-AgentConnections';
import { MatrixCellsText1764100000000 } from './migrations/1764100000000-MatrixCellsText';
import { ViewStamps1764200000000 } from './migrations/1764200000000-ViewStamps';
import { EndpointParameters1764400000000 } from './migrations/1764400000000-EndpointParameters';
import { BatchChanges1764300000000 } from './migrations/1764300000000-BatchChanges';
import { TokenExpiry1764500000000 } from './migrations/1764500000000-TokenExpiry';
import { ObservationNamesGrew1764600000000 } from './migrations/1764600000000-ObservationNamesGrew';

/** Every migration, in order. Listed explicitly so the same list works from `src` (ts) and `dist` (js). */
export const MIGRATIONS = [Initial1763770000000, Evidence1763800000000, CaptureEndpoints1763900000000, AgentConnections1764000000000, MatrixCellsText1764100000000, ViewStamps1764200000000, BatchChanges1764300000000, EndpointParameters1764400000000, TokenExpiry1764500000000, ObservationNamesGrew1764600000000];

/**
 * The one data source definition, shared by the app and the migration command. Never `synchronize`:
 * the schema comes from the migrations only.
 */
export function createDataSource(url: string, poolSize = 10): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    poolSize,
    applicationName: 'spectator-backend',
  });
}

/** For the TypeORM CLI (`typeorm -d dist/src/database/data-source.js migration:run`). */
export default createDataSource(process.env.DATABASE_URL ?? 'postgres://localhost/spectator');
