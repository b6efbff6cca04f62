import type { Logger } from 'pino';
import { DataSource, type EntityManager } from 'typeorm';
import { DEFAULT_DATABASE_IDLE_SECONDS } from '../config/config';
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
import { UnmatchedAndLearned1764750000000 } from './migrations/1764750000000-UnmatchedAndLearned';
import { DashboardEvents1764800000000 } from './migrations/1764800000000-DashboardEvents';
import { PathHints1764810000000 } from './migrations/1764810000000-PathHints';
import { CaptureOverflow1764900000000 } from './migrations/1764900000000-CaptureOverflow';
import { People1765100000000 } from './migrations/1765100000000-People';
import { RolesAndAudit1765200000000 } from './migrations/1765200000000-RolesAndAudit';
import { LearnedCovers1765300000000 } from './migrations/1765300000000-LearnedCovers';
import { RuntimeEvidence1765400000000 } from './migrations/1765400000000-RuntimeEvidence';
import { SessionIdToken1765500000000 } from './migrations/1765500000000-SessionIdToken';
import { RuntimeCells1765610000000 } from './migrations/1765610000000-RuntimeCells';
import { Consumers1765620000000 } from './migrations/1765620000000-Consumers';
import { WebhookFormats1765687000000 } from './migrations/1765687000000-WebhookFormats';
import { DriftOrigins1765700000000 } from './migrations/1765700000000-DriftOrigins';
import { EvidenceQueue1765800000000 } from './migrations/1765800000000-EvidenceQueue';
import { Deprecations1765890000000 } from './migrations/1765890000000-Deprecations';
import { WebhooksByProject1765910000000 } from './migrations/1765910000000-WebhooksByProject';
import { AgentsByProject1765920000000 } from './migrations/1765920000000-AgentsByProject';
import { LogsByProject1765930000000 } from './migrations/1765930000000-LogsByProject';
import { EvidenceRowsByProject1765940000000 } from './migrations/1765940000000-EvidenceRowsByProject';
import { CaptureRowsByProject1765950000000 } from './migrations/1765950000000-CaptureRowsByProject';
import { RuntimeResolutions1765955000000 } from './migrations/1765955000000-RuntimeResolutions';
import { ProposalRowsByProject1765960000000 } from './migrations/1765960000000-ProposalRowsByProject';
import { ConsumerCallsPerBuild1765987000000 } from './migrations/1765987000000-ConsumerCallsPerBuild';
import { VersionsAndCellsByProject1765990000000 } from './migrations/1765990000000-VersionsAndCellsByProject';
import { ParentsKeyedByProject1766000000000 } from './migrations/1766000000000-ParentsKeyedByProject';
import { EndpointRemoval1795881488605 } from './migrations/1795881488605-EndpointRemoval';
import { RuntimePartitions1795881639261 } from './migrations/1795881639261-RuntimePartitions';
import { FoldedRowsRoomToUpdate1795882233699 } from './migrations/1795882233699-FoldedRowsRoomToUpdate';
import { EvidenceFirstSeen1795882936562 } from './migrations/1795882936562-EvidenceFirstSeen';
import { CapturesAndObservationsByProject1795883455939 } from './migrations/1795883455939-CapturesAndObservationsByProject';
import { ObservationsPartitioned1795883461504 } from './migrations/1795883461504-ObservationsPartitioned';
import { ExchangeOrigins1795890573516 } from './migrations/1795890573516-ExchangeOrigins';
import { RuntimeCellsP95Written1795891905972 } from './migrations/1795891905972-RuntimeCellsP95Written';
import { BatchKeysForgotten1795892823315 } from './migrations/1795892823315-BatchKeysForgotten';
import { QueuedEvidenceAsJson1795892823338 } from './migrations/1795892823338-QueuedEvidenceAsJson';
import { OnePartitionMaker1795893570257 } from './migrations/1795893570257-OnePartitionMaker';
import { ConsumerCallsPerKey1795901374861 } from './migrations/1795901374861-ConsumerCallsPerKey';
import { OriginsReadFromEvidence1795902502424 } from './migrations/1795902502424-OriginsReadFromEvidence';
import { IngestWithoutRowForeignKeys1795910196979 } from './migrations/1795910196979-IngestWithoutRowForeignKeys';
import { RuntimeHoursRolledUp1795912716381 } from './migrations/1795912716381-RuntimeHoursRolledUp';
import { PackedEvidenceQueue1795921658378 } from './migrations/1795921658378-PackedEvidenceQueue';
import { RuntimeMinutesWaitPerEndpoint1795931360487 } from './migrations/1795931360487-RuntimeMinutesWaitPerEndpoint';
import { InstanceCountsBeside1795931676888 } from './migrations/1795931676888-InstanceCountsBeside';
import { RuntimeRowsRoomToUpdate1795932641608 } from './migrations/1795932641608-RuntimeRowsRoomToUpdate';
import { RuntimeMinutesWaitingByEnvironment1795937000000 } from './migrations/1795937000000-RuntimeMinutesWaitingByEnvironment';
import { CaptureEndpointCounts1795946000000 } from './migrations/1795946000000-CaptureEndpointCounts';
import { BatchWithoutSharedRowLock1795950000000 } from './migrations/1795950000000-BatchWithoutSharedRowLock';
import { CaptureSummariesReadFromObservations1795960000000 } from './migrations/1795960000000-CaptureSummariesReadFromObservations';
import { InstanceCountsToSix1795970000000 } from './migrations/1795970000000-InstanceCountsToSix';
import { QueuedEvidenceInline1795975000000 } from './migrations/1795975000000-QueuedEvidenceInline';
import { InstanceCountsAddedInPlpgsql1795980000000 } from './migrations/1795980000000-InstanceCountsAddedInPlpgsql';
import { ObservationStatisticsNarrowed1795981000000 } from './migrations/1795981000000-ObservationStatisticsNarrowed';
import { ObservationsRoomToUpdate1795990000000 } from './migrations/1795990000000-ObservationsRoomToUpdate';
import { ConsumerCallsAdded1796000000000 } from './migrations/1796000000000-ConsumerCallsAdded';
import { RuntimeMinutesAddedAsText1796000000001 } from './migrations/1796000000001-RuntimeMinutesAddedAsText';

/** Every migration, in order. Listed explicitly so the same list works from `src` (ts) and `dist` (js). */
export const MIGRATIONS = [
  Initial1763770000000,
  Evidence1763800000000,
  CaptureEndpoints1763900000000,
  AgentConnections1764000000000,
  MatrixCellsText1764100000000,
  ViewStamps1764200000000,
  BatchChanges1764300000000,
  EndpointParameters1764400000000,
  TokenExpiry1764500000000,
  ObservationNamesGrew1764600000000,
  UnmatchedAndLearned1764750000000,
  DashboardEvents1764800000000,
  PathHints1764810000000,
  CaptureOverflow1764900000000,
  People1765100000000,
  RolesAndAudit1765200000000,
  LearnedCovers1765300000000,
  RuntimeEvidence1765400000000,
  SessionIdToken1765500000000,
  RuntimeCells1765610000000,
  Consumers1765620000000,
  WebhookFormats1765687000000,
  DriftOrigins1765700000000,
  EvidenceQueue1765800000000,
  Deprecations1765890000000,
  WebhooksByProject1765910000000,
  AgentsByProject1765920000000,
  LogsByProject1765930000000,
  EvidenceRowsByProject1765940000000,
  CaptureRowsByProject1765950000000,
  RuntimeResolutions1765955000000,
  ProposalRowsByProject1765960000000,
  ConsumerCallsPerBuild1765987000000,
  VersionsAndCellsByProject1765990000000,
  ParentsKeyedByProject1766000000000,
  EndpointRemoval1795881488605,
  RuntimePartitions1795881639261,
  FoldedRowsRoomToUpdate1795882233699,
  EvidenceFirstSeen1795882936562,
  CapturesAndObservationsByProject1795883455939,
  ObservationsPartitioned1795883461504,
  ExchangeOrigins1795890573516,
  RuntimeCellsP95Written1795891905972,
  BatchKeysForgotten1795892823315,
  QueuedEvidenceAsJson1795892823338,
  OnePartitionMaker1795893570257,
  ConsumerCallsPerKey1795901374861,
  OriginsReadFromEvidence1795902502424,
  IngestWithoutRowForeignKeys1795910196979,
  RuntimeHoursRolledUp1795912716381,
  PackedEvidenceQueue1795921658378,
  RuntimeMinutesWaitPerEndpoint1795931360487,
  InstanceCountsBeside1795931676888,
  RuntimeRowsRoomToUpdate1795932641608,
  RuntimeMinutesWaitingByEnvironment1795937000000,
  CaptureEndpointCounts1795946000000,
  BatchWithoutSharedRowLock1795950000000,
  CaptureSummariesReadFromObservations1795960000000,
  InstanceCountsToSix1795970000000,
  QueuedEvidenceInline1795975000000,
  InstanceCountsAddedInPlpgsql1795980000000,
  ObservationStatisticsNarrowed1795981000000,
  ObservationsRoomToUpdate1795990000000,
  ConsumerCallsAdded1796000000000,
  RuntimeMinutesAddedAsText1796000000001,
];

/** Connections of a replica's request pool (requests, ingest's reads, periodic jobs). */
export const REQUEST_POOL_SIZE = 10;

/**
 * The one data source definition, shared by the app and the migration command. Never `synchronize`:
 * the schema comes from the migrations only. No entities: every table is read and written with raw
 * SQL by its domain's repository (`x.repository.ts`). A pool connection idle for `idleSeconds` is
 * closed (0: never; node-postgres's own default would be 10 s). `planCacheMode` sets PostgreSQL's
 * `plan_cache_mode` on the pool's connections (absent: the server's, `auto`).
 */
export function createDataSource(
  url: string,
  {
    poolSize = REQUEST_POOL_SIZE,
    applicationName = 'spectator-backend',
    idleSeconds = DEFAULT_DATABASE_IDLE_SECONDS,
    planCacheMode,
  }: {
    poolSize?: number;
    applicationName?: string;
    idleSeconds?: number;
    planCacheMode?: 'force_generic_plan' | 'force_custom_plan';
  } = {},
): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    poolSize,
    applicationName,
    // pg-pool's option: 0 keeps idle connections open.
    extra: {
      idleTimeoutMillis: idleSeconds * 1000,
      ...(planCacheMode === undefined ? {} : { options: `-c plan_cache_mode=${planCacheMode}` }),
    },
  });
}

/** PostgreSQL could not be reached or refused the login: names where (password hidden), which setting, and why. */
export class DatabaseUnreachable extends Error {
  constructor(url: string, source: string, cause: unknown) {
    // Duck-typed: the driver's errors may come from another realm (under jest, `instanceof Error` fails).
    const reason =
      typeof (cause as { message?: unknown } | null)?.message === 'string'
        ? (cause as { message: string }).message
        : String(cause);
    super(`could not connect to PostgreSQL at ${withoutPassword(url)} (${source}): ${reason}`, { cause });
    this.name = 'DatabaseUnreachable';
  }
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unreadable URL)';
  }
}

/**
 * Opens the data source. A connection failure becomes a `DatabaseUnreachable` naming the database
 * and the setting it came from (`source`, e.g. `DATABASE_URL`): the bare driver error
 * (`Error: connect ECONNREFUSED 127.0.0.1:5432` and a stack) named neither.
 */
export async function connectDataSource(dataSource: DataSource, url: string, source: string): Promise<void> {
  try {
    await dataSource.initialize();
  } catch (error) {
    throw new DatabaseUnreachable(url, source, error);
  }
}

/**
 * Opens every connection of `dataSource`'s pool (its `poolSize`; `pool` names it in the log) at
 * once (each is held until all are open, so they are distinct), runs `prepare` on each (a
 * named statement's first run parses and plans it there) and returns them to the pool, idle.
 * Issue 20: the pools opened their connections as the first batches came, each a new PostgreSQL
 * backend (authentication, cold catalog caches, and on a writer's the batch statement's plan, 35
 * ms) while agents waited: the scale bench's first evidence slice opened 25 connections.
 * A failure (e.g. the server's `max_connections` reached) is logged, not thrown: the pool then
 * opens its connections when they are asked for, as before.
 */
export async function openConnections(
  dataSource: DataSource,
  log: Logger,
  pool: string,
  prepare?: (manager: EntityManager) => Promise<unknown>,
): Promise<void> {
  const count = dataSource.options.poolSize ?? REQUEST_POOL_SIZE;
  const runners = Array.from({ length: count }, () => dataSource.createQueryRunner());
  // Settled, not raced: a connection still opening when another failed would otherwise never go back.
  const opened = await Promise.allSettled(
    runners.map(async (runner) => {
      await runner.connect();
      await prepare?.(runner.manager);
    }),
  );
  await Promise.all(runners.map((runner) => runner.release()));
  const failed = opened.find((result) => result.status === 'rejected');
  if (failed !== undefined)
    log.warn({ err: failed.reason, count }, `could not open ${pool}'s connections at start: they open when asked for`);
}

/** For the TypeORM CLI (`typeorm -d dist/src/database/data-source.js migration:run`). */
export default createDataSource(process.env.DATABASE_URL ?? 'postgres://localhost/spectator');
