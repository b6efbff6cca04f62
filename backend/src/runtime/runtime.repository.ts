import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LatencyHistogram, type MatrixKind, type WireHistogram } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { integerArrayLiteral, textArrayLiteral } from '../captures/batch-statement';
import { queryPrepared } from '../common/prepared';
import { checkedName } from '../partitions/partitions.repository';

/** One minute of one endpoint's exchanges in a batch, folded (see `RuntimeService.record`). */
export interface RuntimeMinute {
  method: string;
  path: string;
  /** The minute's start, ISO 8601. */
  minute: string;
  requests: number;
  serverErrors: number;
  upstreamFailures: number;
  clientLeft: number;
  ttfb: WireHistogram;
  ttlb: WireHistogram;
}

/** Which environment row's runtime rows: the kind, and one row's name (a build, `PR #42`) or all of them. */
export interface RuntimeScope {
  projectId: string;
  method: string;
  path: string;
  kind: MatrixKind;
  name: string | null;
  since: Date;
}

/**
 * The counts of one environment row and version over one step (`RuntimeRepository.steps`), as a
 * series reads them: numbers (exact: far below 2^53) and the histograms as text
 * (`LatencyHistogram.addWireText`), so no string, Date or object is made per count or bucket.
 */
export interface RuntimeStepRow {
  version: string;
  /** The step's start, milliseconds since 1970. */
  at: number;
  requests: number;
  serverErrors: number;
  upstreamFailures: number;
  clientLeft: number;
  /** The histogram in wire form, as jsonb's text. */
  ttfb: string;
  ttlb: string;
}

/** One endpoint's counts at one version summed over a window (`RuntimeRepository.totals`). */
export interface RuntimeTotalRow {
  endpointId: string;
  method: string;
  path: string;
  version: string;
  requests: string;
  serverErrors: string;
  ttfb: WireHistogram;
  ttlb: WireHistogram;
}

/** The resolutions runtime rows are kept at (each holds all of the traffic within its retention). */
export type RuntimeResolution = 'minute' | 'hour' | 'day';

/** Counts that add, with the histograms: of a series point, a fold's minutes merged, a rolled-up row. */
export interface RuntimeSums {
  requests: number;
  serverErrors: number;
  upstreamFailures: number;
  clientLeft: number;
  ttfb: LatencyHistogram;
  ttlb: LatencyHistogram;
}

/** Sums of nothing yet. */
export function emptySums(): RuntimeSums {
  return {
    requests: 0,
    serverErrors: 0,
    upstreamFailures: 0,
    clientLeft: 0,
    ttfb: new LatencyHistogram(),
    ttlb: new LatencyHistogram(),
  };
}

/** The counts of `from` added to `into` (histograms apart: each caller reads them its own way). */
export function addCounts(
  into: Pick<RuntimeSums, 'requests' | 'serverErrors' | 'upstreamFailures' | 'clientLeft'>,
  from: Readonly<Pick<RuntimeSums, 'requests' | 'serverErrors' | 'upstreamFailures' | 'clientLeft'>>,
): void {
  into.requests += from.requests;
  into.serverErrors += from.serverErrors;
  into.upstreamFailures += from.upstreamFailures;
  into.clientLeft += from.clientLeft;
}

/** Which environment rows' runtime rows, of every endpoint: the kind, and one row's name or all of them. */
export type RuntimeEnvironmentScope = Omit<RuntimeScope, 'method' | 'path'>;

/** Requests of one version over one step, every endpoint together (`RuntimeRepository.shareSteps`). */
export interface ShareStepRow {
  version: string;
  at: Date;
  requests: string;
}

/** Requests of one endpoint at one version over a window (`RuntimeRepository.shareEndpoints`). */
export interface ShareEndpointRow {
  endpointId: string | null;
  method: string;
  path: string;
  version: string;
  requests: string;
}

/** The columns that add when two rows of one key merge, as `SET` assignments from `EXCLUDED`. */
const ADD_COLUMNS = `
  requests = b.requests + EXCLUDED.requests,
  server_errors = b.server_errors + EXCLUDED.server_errors,
  upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
  client_left = b.client_left + EXCLUDED.client_left,
  ttfb = runtime_histogram_add(b.ttfb, EXCLUDED.ttfb),
  ttlb = runtime_histogram_add(b.ttlb, EXCLUDED.ttlb)`;

/**
 * The same for an upsert whose histograms were merged in Node with the stored ones (read locked
 * before): counts added, histograms as written.
 */
const ADD_MERGED = `
  requests = b.requests + EXCLUDED.requests,
  server_errors = b.server_errors + EXCLUDED.server_errors,
  upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
  client_left = b.client_left + EXCLUDED.client_left,
  ttfb = EXCLUDED.ttfb,
  ttlb = EXCLUDED.ttlb`;

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';
const CELL_KEY = 'project_id, environment_kind, environment_name, method, path';

/** The advisory lock (`hashtext`) one replica holds while it rolls minutes up into hours and days. */
const ROLL_UP_LOCK = 'spectator runtime roll-up';
/** Minutes (rows of `runtime_minutes_added`) rolled up per statement. */
const ROLL_UP_CHUNK = 5_000;

/**
 * Every runtime row of one resolution (the SQL expression `resolution`, e.g. a parameter) as read:
 * the stored ones and the minutes folds added since the last roll-up (`runtime_minutes_added`,
 * RuntimeMinutesWaitPerEndpoint1795931360487), each as a row of its minute, hour or day, so a read
 * answers every exchange folded whenever the roll-up runs. The minutes waiting are found by
 * project, environment kind, method and path (an index), so a read of one endpoint reads only
 * that endpoint's, and by project, environment kind and row, and minute (another,
 * RuntimeMinutesWaitingByEnvironment1795937000000), so a read of one environment row (the version
 * share, the gate's totals) reads that row's minutes of its window (`since`, the SQL expression of
 * the window's start: a step starts at or after it only if its minutes do, so this bound leaves out
 * no row a read keeps). Several rows of one key are summed by the reads. The waiting minutes'
 * histograms are text (RuntimeMinutesAddedAsText1796000000001), read as jsonb here.
 */
const runtimeRows = (resolution: string, since: string): string => `
  (SELECT ${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb FROM runtime_buckets
   UNION ALL
   SELECT project_id, method, path, environment_kind, environment_name, version, ${resolution}::text,
          date_trunc(${resolution}::text, minute, 'UTC'), requests, server_errors, upstream_failures, client_left,
          ttfb::jsonb, ttlb::jsonb
     FROM runtime_minutes_added
    WHERE minute >= ${since}::timestamptz)`;

/**
 * Adds a fold's minutes `$4`… (parallel arrays, one per endpoint and minute) to those waiting for
 * the roll-up (`runtime_minutes_added`), each under the version the environment row's evidence
 * cell names for its endpoint (`''` when there is none: an undocumented endpoint, or no cell yet).
 * An insert only: the roll-up adds them to their minute, hour and day rows (`rollUp`). The row's id
 * is found first (an InitPlan), so its cells are read by it and joined by endpoint: joined through a
 * row read in the join, the planner took the row's cells for one row's (a nested loop comparing every
 * minute with every cell: 53,820 comparisons for 200 minutes of a row of 270 cells). The histograms
 * are stored as the replica wrote them (`JSON.stringify` of a histogram it made), not parsed.
 */
const ADD_MINUTES = `
  INSERT INTO runtime_minutes_added (project_id, environment_kind, environment_name, method, path, version, minute,
                                     requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT $1::uuid, $2::text, $3::text, r.method, r.path, coalesce(c.version, ''), r.minute,
         r.requests, r.server_errors, r.upstream_failures, r.client_left, r.ttfb, r.ttlb
    FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[],
                $11::text[], $12::text[])
         AS r(method, path, minute, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
    LEFT JOIN endpoints e ON e.project_id = $1::uuid AND e.method = r.method AND e.path = r.path
    LEFT JOIN evidence_cells c
           ON c.row_id = (SELECT id FROM environment_rows WHERE project_id = $1::uuid AND kind = $2::text AND name = $3::text)
          AND c.endpoint_id = e.id`;

/**
 * Takes at most `$2` minutes of `runtime_minutes_added` (of the project `$1`, or of all when null)
 * to roll them up: deleted here, so a minute reaches its minute, hour and day rows once. Only
 * roll-ups delete these rows, under the roll-up's lock, so they are not locked first. Histograms
 * as jsonb's text (`addWireText`). In endpoint order (their index): each statement of a roll-up
 * writes the hour and day rows it touches, so statements of whole endpoints write each row once
 * where statements of minutes in any order rewrote every endpoint's (a roll-up every 60 folds in
 * runtime-fold.bench: its WAL 159 → 69 KB a fold). `last` marks a minute of the last endpoint
 * taken: the statements after the first (`TAKE_MINUTES_AFTER`) start at its endpoint (`$3`…`$6`, a keyset),
 * because the index still holds the entries of the minutes this transaction deleted, and a scan
 * from the start walked past all of them again in every statement (quadratic in a backlog).
 */
const takeMinutes = (after: string): string => `
  WITH picked AS MATERIALIZED (
    SELECT ctid AS id, project_id, environment_kind, method, path FROM runtime_minutes_added
     WHERE ($1::uuid IS NULL OR project_id = $1::uuid) ${after}
     ORDER BY project_id, environment_kind, method, path LIMIT $2
  ), taken AS (
    DELETE FROM runtime_minutes_added WHERE ctid = ANY(ARRAY(SELECT id FROM picked)) RETURNING ctid AS id, *
  )
  SELECT project_id AS "projectId", environment_kind AS kind, environment_name AS name, method, path, version,
         (extract(epoch FROM minute) * 1000)::float8 AS at, requests::float8, server_errors::float8 AS "serverErrors",
         upstream_failures::float8 AS "upstreamFailures", client_left::float8 AS "clientLeft", ttfb::text, ttlb::text,
         id = (SELECT id FROM picked ORDER BY project_id DESC, environment_kind DESC, method DESC, path DESC LIMIT 1)
           AS last
    FROM taken`;
const TAKE_MINUTES = takeMinutes('');
const TAKE_MINUTES_AFTER = takeMinutes(
  'AND (project_id, environment_kind, method, path) >= ($3::uuid, $4::text, $5::text, $6::text)',
);

/** The keys of the minute, hour and day rows a roll-up adds to (`rolledUp`), parallel arrays. */
const ROLLED_UP_KEYS = `unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                               $8::timestamptz[])`;

/** The rows `ROLLED_UP_KEYS` that are stored, locked, in key order. */
const LOCK_ROLLED_UP = `
  SELECT k.i::int AS i, b.ttfb::text, b.ttlb::text
    FROM (SELECT * FROM ${ROLLED_UP_KEYS} WITH ORDINALITY
                 AS k(project_id, method, path, kind, name, version, resolution, bucket, i)
           ORDER BY k.project_id, k.method COLLATE "C", k.path COLLATE "C", k.kind COLLATE "C", k.name COLLATE "C",
                    k.version COLLATE "C", k.resolution COLLATE "C", k.bucket) k
    JOIN LATERAL (
      SELECT ttfb, ttlb FROM runtime_buckets b
       WHERE b.project_id = k.project_id AND b.method = k.method AND b.path = k.path AND b.environment_kind = k.kind
         AND b.environment_name = k.name AND b.version = k.version AND b.resolution = k.resolution
         AND b.bucket = k.bucket
       FOR UPDATE) b ON true`;

/**
 * Adds a roll-up's minute, hour and day rows (their keys as in `ROLLED_UP_KEYS`, then their counts and
 * histograms) to the stored ones, in key order: counts added, histograms as merged in Node with those
 * LOCK_ROLLED_UP read (only roll-ups and regroupings, under the roll-up's lock, write runtime rows).
 */
const WRITE_ROLLED_UP = `
  INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT k.project_id, k.method, k.path, k.kind, k.name, k.version, k.resolution, k.bucket,
         k.requests, k.server_errors, k.upstream_failures, k.client_left, k.ttfb::jsonb, k.ttlb::jsonb
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                $8::timestamptz[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[])
         AS k(project_id, method, path, kind, name, version, resolution, bucket, requests, server_errors,
              upstream_failures, client_left, ttfb, ttlb)
   ORDER BY k.project_id, k.method COLLATE "C", k.path COLLATE "C", k.kind COLLATE "C", k.name COLLATE "C",
            k.version COLLATE "C", k.resolution COLLATE "C", k.bucket
  ON CONFLICT (${KEY}) DO UPDATE SET ${ADD_MERGED}`;

/** A minute waiting for the roll-up, as `TAKE_MINUTES` answers it. */
interface TakenMinute {
  projectId: string;
  kind: string;
  name: string;
  method: string;
  path: string;
  version: string;
  /** Its start, milliseconds since 1970. */
  at: number;
  requests: number;
  serverErrors: number;
  upstreamFailures: number;
  clientLeft: number;
  /** The histograms as jsonb's text. */
  ttfb: string;
  ttlb: string;
  /** Whether it is of the last endpoint taken (one minute of a statement's is). */
  last: boolean;
}

/** One minute, hour or day row a roll-up adds to. */
type RolledUpRow = RuntimeSums & {
  projectId: string;
  kind: string;
  name: string;
  method: string;
  path: string;
  version: string;
  resolution: RuntimeResolution;
  bucket: number;
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The minutes taken (`TAKE_MINUTES`) summed per minute, hour and day row (UTC): counts added,
 * histograms merged; each histogram's text read once, into its minute row, whose sums are then
 * added to its hour and day rows.
 */
function rolledUp(taken: readonly TakenMinute[]): RolledUpRow[] {
  const rows = new Map<string, RolledUpRow>();
  const rowOf = (m: TakenMinute, resolution: RuntimeResolution, bucket: number): RolledUpRow => {
    const key = `${m.projectId} ${m.kind} ${m.name} ${m.method} ${m.path} ${m.version} ${resolution} ${bucket}`;
    let row = rows.get(key);
    if (row === undefined) {
      const { projectId, kind, name, method, path, version } = m;
      rows.set(key, (row = { projectId, kind, name, method, path, version, resolution, bucket, ...emptySums() }));
    }
    return row;
  };
  const minutes = new Map<RolledUpRow, TakenMinute>();
  for (const m of taken) {
    const row = rowOf(m, 'minute', m.at);
    minutes.set(row, m);
    addCounts(row, m);
    row.ttfb.addWireText(m.ttfb);
    row.ttlb.addWireText(m.ttlb);
  }
  for (const [minute, m] of minutes)
    for (const [resolution, bucket] of [
      ['hour', m.at - (m.at % HOUR_MS)],
      ['day', m.at - (m.at % DAY_MS)],
    ] as const) {
      const row = rowOf(m, resolution, bucket);
      addCounts(row, minute);
      row.ttfb.add(minute.ttfb);
      row.ttlb.add(minute.ttlb);
    }
  return [...rows.values()];
}

/** The cells (`runtime_cells`) of a fold's endpoints `$4`, `$5` (method, path) that are stored, locked, in key order. */
const LOCK_CELLS = `
  SELECT k.i::int AS i, c.requests::float8 AS requests, c.ttlb
    FROM (SELECT r.i, r.method, r.path FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS r(method, path, i)
           ORDER BY r.method COLLATE "C", r.path COLLATE "C") k
    JOIN LATERAL (
      SELECT requests, ttlb FROM runtime_cells c
       WHERE c.project_id = $1::uuid AND c.environment_kind = $2::text AND c.environment_name = $3::text
         AND c.method = k.method AND c.path = k.path
       FOR UPDATE) c ON true`;

/**
 * Writes a fold's endpoints to the environment row's cells (`runtime_cells`: every exchange since
 * the row began, per endpoint): counts added, `ttlb` as merged in Node with the stored one that
 * LOCK_CELLS found, and the bucket of its 95th percentile (`ttlb_p95`,
 * `LatencyHistogram.quantileBucket`) read there too.
 */
const WRITE_CELLS = `
  WITH written AS (
    INSERT INTO runtime_cells AS c (${CELL_KEY}, requests, server_errors, ttlb, ttlb_p95)
    SELECT $1::uuid, $2::text, $3::text, r.method, r.path, r.requests, r.server_errors, r.ttlb::jsonb, r.ttlb_p95
      FROM unnest($4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[], $9::int[])
           AS r(method, path, requests, server_errors, ttlb, ttlb_p95)
     ORDER BY r.method COLLATE "C", r.path COLLATE "C"
    ON CONFLICT (${CELL_KEY}) DO UPDATE SET
      requests = c.requests + EXCLUDED.requests,
      server_errors = c.server_errors + EXCLUDED.server_errors,
      ttlb = EXCLUDED.ttlb,
      ttlb_p95 = EXCLUDED.ttlb_p95
    RETURNING requests)
  SELECT coalesce(sum(requests), 0)::float8 AS requests FROM written`;

/**
 * Moves the rows of paths `$2` (literals a learned or stated template `$3` covers) into the
 * template's rows, added to what those hold, for the environment rows `$4` (every row when null):
 * no literal is left, as in the evidence (paths/regroup.service.ts).
 */
const REGROUP = `
  WITH moved AS (
    DELETE FROM runtime_buckets
     WHERE project_id = $1::uuid AND path = ANY($2::text[])
       AND ($4::uuid[] IS NULL OR (environment_kind, environment_name) IN
            (SELECT kind, name FROM environment_rows WHERE project_id = $1::uuid AND id = ANY($4::uuid[])))
    RETURNING *
  ), written AS (
    INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
    SELECT project_id, method, $3::text, environment_kind, environment_name, version, resolution, bucket,
           sum(requests), sum(server_errors), sum(upstream_failures), sum(client_left),
           runtime_histogram_sum(ttfb), runtime_histogram_sum(ttlb)
      FROM moved
     GROUP BY project_id, method, environment_kind, environment_name, version, resolution, bucket
    ON CONFLICT (${KEY}) DO UPDATE SET ${ADD_COLUMNS}
  )
  SELECT count(*)::int AS moved FROM moved`;

/** REGROUP for the cells of the same environment rows (`runtime_cells`). */
const REGROUP_CELLS = `
  WITH moved AS (
    DELETE FROM runtime_cells
     WHERE project_id = $1::uuid AND path = ANY($2::text[])
       AND ($4::uuid[] IS NULL OR (environment_kind, environment_name) IN
            (SELECT kind, name FROM environment_rows WHERE project_id = $1::uuid AND id = ANY($4::uuid[])))
    RETURNING project_id, environment_kind, environment_name, method, requests, server_errors, ttlb
  )
  INSERT INTO runtime_cells AS c (${CELL_KEY}, requests, server_errors, ttlb, ttlb_p95)
  SELECT project_id, environment_kind, environment_name, method, $3::text, sum(requests), sum(server_errors),
         runtime_histogram_sum(ttlb), runtime_histogram_quantile(runtime_histogram_sum(ttlb), 0.95)
    FROM moved
   GROUP BY project_id, environment_kind, environment_name, method
  ON CONFLICT (${CELL_KEY}) DO UPDATE SET
    requests = c.requests + EXCLUDED.requests,
    server_errors = c.server_errors + EXCLUDED.server_errors,
    ttlb = runtime_histogram_add(c.ttlb, EXCLUDED.ttlb),
    ttlb_p95 = runtime_histogram_quantile(runtime_histogram_add(c.ttlb, EXCLUDED.ttlb), 0.95)`;

/** One matrix cell's runtime: an environment row's exchanges of one endpoint since the row began. */
export interface RuntimeCellRow {
  kind: string;
  name: string;
  method: string;
  path: string;
  requests: string;
  serverErrors: string;
  /** The bucket of the 95th percentile of time to last byte; null when no response ended. */
  p95Bucket: number | null;
}

/** One endpoint's minutes of a fold summed, as its runtime cell adds them. */
interface RuntimeCellSums {
  method: string;
  path: string;
  requests: number;
  serverErrors: number;
  ttlb: LatencyHistogram;
}

/**
 * Throws when the rows written hold more requests than those added and those stored when the
 * locked read before the write found them: another transaction added a row in between, and its
 * histograms would be overwritten (the fold rolls back, its batches stay queued). Every stored row
 * holds at least one request (a row is written for exchanges only), so no such row goes unseen.
 */
function unchanged(what: string, read: number, added: number, written: number | undefined): void {
  const stored = (written ?? 0) - added;
  if (stored !== read)
    throw new Error(
      `${what} appeared while a fold wrote them (${read} requests stored when read, ${stored} when written)`,
    );
}

/** The requests of some rows together. */
const requestsOf = (rows: ReadonlyArray<{ requests: number | null }>): number =>
  rows.reduce((sum, row) => sum + (row.requests ?? 0), 0);

/** The SQL of runtime evidence (`runtime_buckets`), raw SQL in one style. */
@Injectable()
export class RuntimeRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Adds a fold's minutes of one environment row (one per endpoint and minute: `foldedMinutes`), in
   * the fold's transaction, which holds that row's lock: to the minutes waiting for the roll-up into
   * their minute, hour and day rows (`ADD_MINUTES`, an insert: `rollUp`); and to the endpoints' cells, whose stored histograms are read and locked, merged here with the fold's
   * and written in one upsert (the 95th percentile's bucket read from the merged histogram). Only
   * folds and regroupings, which hold the row's lock, add cells of a row; should a cell appear
   * between the read and the write all the same, the fold fails (and is folded again later) rather
   * than lose what that cell held.
   */
  async addMinutes(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    environment: { kind: MatrixKind; name: string },
    added: readonly RuntimeMinute[],
  ): Promise<void> {
    if (added.length === 0) return;
    const head = [projectId, environment.kind, environment.name];
    // Arrays as literals (textArrayLiteral): pg's generic encoding costs a regular expression per element.
    // The fold's three statements are named (every fold with runtime runs them): parsed once per
    // connection and, past their first five executions, planned again only when a table they use changes.
    await queryPrepared(manager, 'spectator_fold_add_minutes', ADD_MINUTES, [
      ...head,
      textArrayLiteral(added.map((m) => m.method)),
      textArrayLiteral(added.map((m) => m.path)),
      textArrayLiteral(added.map((m) => m.minute)),
      integerArrayLiteral(added.map((m) => m.requests)),
      integerArrayLiteral(added.map((m) => m.serverErrors)),
      integerArrayLiteral(added.map((m) => m.upstreamFailures)),
      integerArrayLiteral(added.map((m) => m.clientLeft)),
      textArrayLiteral(added.map((m) => JSON.stringify(m.ttfb))),
      textArrayLiteral(added.map((m) => JSON.stringify(m.ttlb))),
    ]);

    // The endpoints' cells: every minute of one endpoint summed, then added to the stored cell.
    const byEndpoint = new Map<string, RuntimeCellSums>();
    for (const m of added) {
      const key = `${m.method} ${m.path}`;
      let cell = byEndpoint.get(key);
      if (cell === undefined)
        byEndpoint.set(
          key,
          (cell = { method: m.method, path: m.path, requests: 0, serverErrors: 0, ttlb: new LatencyHistogram() }),
        );
      cell.requests += m.requests;
      cell.serverErrors += m.serverErrors;
      cell.ttlb.addWire(m.ttlb);
    }
    const cells = [...byEndpoint.values()];
    const storedCells = await queryPrepared<{ i: number; requests: number; ttlb: WireHistogram }>(
      manager,
      'spectator_fold_lock_runtime_cells',
      LOCK_CELLS,
      [...head, textArrayLiteral(cells.map((c) => c.method)), textArrayLiteral(cells.map((c) => c.path))],
    );
    for (const { i, ttlb } of storedCells) (cells[i - 1] as RuntimeCellSums).ttlb.addWire(ttlb);
    const [cellsWritten] = await queryPrepared<{ requests: number }>(
      manager,
      'spectator_fold_write_runtime_cells',
      WRITE_CELLS,
      [
        ...head,
        textArrayLiteral(cells.map((c) => c.method)),
        textArrayLiteral(cells.map((c) => c.path)),
        integerArrayLiteral(cells.map((c) => c.requests)),
        integerArrayLiteral(cells.map((c) => c.serverErrors)),
        textArrayLiteral(cells.map((c) => JSON.stringify(c.ttlb.toWire()))),
        textArrayLiteral(
          cells.map((c) => {
            const p95 = c.ttlb.quantileBucket(0.95);
            return p95 === null ? null : String(p95);
          }),
        ),
      ],
    );
    unchanged('runtime cells', requestsOf(storedCells), requestsOf(cells), cellsWritten?.requests);
  }

  /** Moves the rows of `literals` into `template` (see REGROUP), in the regrouping's transaction. @returns how many. */
  async regroup(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    // The project's minutes not yet in their minute, hour and day rows go there first, under the literals
    // they were folded under, and move with them; the lock keeps a roll-up from adding to the
    // literals' hours after this (folds of these rows wait for the regrouping's row locks).
    await this.rollUpIn(manager, projectId, true);
    const [{ moved }] = (await manager.query(REGROUP, [projectId, literals, template, rowIds])) as [{ moved: number }];
    await manager.query(REGROUP_CELLS, [projectId, literals, template, rowIds]);
    return moved;
  }

  /**
   * Adds the minutes folds added (`TAKE_MINUTES`) to their minute, hour and day rows, in a transaction of
   * its own: of one project, or of all when null, under an advisory lock that one transaction holds at
   * a time (waiting for it, or giving up when another holds it: `wait`).
   * @returns how many minutes were rolled up, or null when another transaction holds the lock.
   */
  rollUp(projectId: string | null, wait: boolean): Promise<number | null> {
    return this.db.transaction((manager) => this.rollUpIn(manager, projectId, wait));
  }

  /** `rollUp` in `manager`'s transaction. */
  private async rollUpIn(
    manager: Pick<EntityManager, 'query'>,
    projectId: string | null,
    wait: boolean,
  ): Promise<number | null> {
    if (wait) await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [ROLL_UP_LOCK]);
    else {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', [
        ROLL_UP_LOCK,
      ])) as [{ locked: boolean }];
      if (!locked) return null;
    }
    let taken = 0;
    let last: TakenMinute | undefined;
    for (;;) {
      const chunk = (await manager.query(
        last === undefined ? TAKE_MINUTES : TAKE_MINUTES_AFTER,
        last === undefined
          ? [projectId, ROLL_UP_CHUNK]
          : [projectId, ROLL_UP_CHUNK, last.projectId, last.kind, last.method, last.path],
      )) as TakenMinute[];
      last = chunk.find((m) => m.last);
      // The minutes of a project deleted since they were folded go with it (they have no foreign key).
      const projects = [...new Set(chunk.map((m) => m.projectId))];
      const live = new Set(
        projects.length === 0
          ? []
          : (
              (await manager.query('SELECT id FROM projects WHERE id = ANY($1::uuid[])', [
                textArrayLiteral(projects),
              ])) as Array<{ id: string }>
            ).map((p) => p.id),
      );
      const rows = rolledUp(chunk.filter((m) => live.has(m.projectId)));
      if (rows.length > 0) {
        const keys = [
          textArrayLiteral(rows.map((r) => r.projectId)),
          textArrayLiteral(rows.map((r) => r.method)),
          textArrayLiteral(rows.map((r) => r.path)),
          textArrayLiteral(rows.map((r) => r.kind)),
          textArrayLiteral(rows.map((r) => r.name)),
          textArrayLiteral(rows.map((r) => r.version)),
          textArrayLiteral(rows.map((r) => r.resolution)),
          textArrayLiteral(rows.map((r) => new Date(r.bucket).toISOString())),
        ];
        const stored = (await manager.query(LOCK_ROLLED_UP, keys)) as Array<{ i: number; ttfb: string; ttlb: string }>;
        for (const { i, ttfb, ttlb } of stored) {
          const row = rows[i - 1] as RolledUpRow;
          row.ttfb.addWireText(ttfb);
          row.ttlb.addWireText(ttlb);
        }
        await manager.query(WRITE_ROLLED_UP, [
          ...keys,
          integerArrayLiteral(rows.map((r) => r.requests)),
          integerArrayLiteral(rows.map((r) => r.serverErrors)),
          integerArrayLiteral(rows.map((r) => r.upstreamFailures)),
          integerArrayLiteral(rows.map((r) => r.clientLeft)),
          textArrayLiteral(rows.map((r) => JSON.stringify(r.ttfb.toWire()))),
          textArrayLiteral(rows.map((r) => JSON.stringify(r.ttlb.toWire()))),
        ]);
      }
      taken += chunk.length;
      if (chunk.length < ROLL_UP_CHUNK) return taken;
    }
  }

  /** The cells of the environment rows `rows` (kind and name) of a project: one per endpoint with runtime evidence. */
  cells(projectId: string, rows: ReadonlyArray<{ kind: string; name: string }>): Promise<RuntimeCellRow[]> {
    if (rows.length === 0) return Promise.resolve([]);
    return this.db.query(
      `SELECT environment_kind AS kind, environment_name AS name, method, path, requests::text,
              server_errors::text AS "serverErrors", ttlb_p95 AS "p95Bucket"
         FROM runtime_cells
        WHERE project_id = $1
          AND (environment_kind, environment_name) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
      [projectId, rows.map((r) => r.kind), rows.map((r) => r.name)],
    );
  }

  /**
   * Deletes at most `limit` rows older than `before` from one partition (the one the retention
   * horizon cuts, or a default partition): by `ctid`, which is unique within one partition only.
   * @returns how many.
   */
  async prunePartition(name: string, before: Date, limit: number): Promise<number> {
    const table = checkedName(name);
    const [{ deleted }] = (await this.db.query(
      `WITH pruned AS (
         DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE bucket < $1 LIMIT $2))
         RETURNING 1)
       SELECT count(*)::int AS deleted FROM pruned`,
      [before, limit],
    )) as [{ deleted: number }];
    return deleted;
  }

  /**
   * One endpoint's rows of one resolution in one environment since `since`, in version and time
   * order: one per environment row (of the kind, or the one named) and version at each step.
   */
  steps(scope: RuntimeScope, resolution: RuntimeResolution): Promise<RuntimeStepRow[]> {
    return this.db.query(
      `SELECT version, (extract(epoch FROM bucket) * 1000)::float8 AS at, requests::float8,
              server_errors::float8 AS "serverErrors", upstream_failures::float8 AS "upstreamFailures",
              client_left::float8 AS "clientLeft", ttfb::text, ttlb::text
         FROM ${runtimeRows('$7', '$6')} b
        WHERE project_id = $1 AND method = $2 AND path = $3 AND environment_kind = $4
          AND ($5::text IS NULL OR environment_name = $5) AND resolution = $7 AND bucket >= $6
        ORDER BY version, bucket`,
      [scope.projectId, scope.method, scope.path, scope.kind, scope.name, scope.since, resolution],
    );
  }

  /** Requests per version and step (the rows of `resolution`) in one environment since `since`, every endpoint together. */
  shareSteps(scope: RuntimeEnvironmentScope, resolution: RuntimeResolution): Promise<ShareStepRow[]> {
    return this.db.query(
      `SELECT version, bucket AS at, sum(requests)::text AS requests
         FROM ${runtimeRows('$5', '$4')} b
        WHERE project_id = $1 AND environment_kind = $2 AND ($3::text IS NULL OR environment_name = $3)
          AND resolution = $5 AND bucket >= $4
        GROUP BY version, bucket
        ORDER BY version, bucket`,
      [scope.projectId, scope.kind, scope.name, scope.since, resolution],
    );
  }

  /**
   * Requests per endpoint and version in one environment since `since`, from the rows of
   * `resolution` (the id null for an undocumented endpoint).
   */
  shareEndpoints(scope: RuntimeEnvironmentScope, resolution: RuntimeResolution): Promise<ShareEndpointRow[]> {
    return this.db.query(
      `SELECT e.id AS "endpointId", b.method, b.path, b.version, sum(b.requests)::text AS requests
         FROM ${runtimeRows('$5', '$4')} b
         LEFT JOIN endpoints e ON e.project_id = b.project_id AND e.method = b.method AND e.path = b.path
        WHERE b.project_id = $1 AND b.environment_kind = $2 AND ($3::text IS NULL OR b.environment_name = $3)
          AND b.resolution = $5 AND b.bucket >= $4
        GROUP BY e.id, b.method, b.path, b.version`,
      [scope.projectId, scope.kind, scope.name, scope.since, resolution],
    );
  }

  /**
   * The counts of documented endpoints in one environment since `since`, summed per endpoint and
   * version from the rows of `resolution` (rows under no version left out): of one row (`name`,
   * e.g. `PR #42`) or every row of the kind, and of the given (method, path, version) keys only, or
   * of all.
   */
  totals(
    projectId: string,
    kind: MatrixKind,
    name: string | null,
    since: Date,
    resolution: RuntimeResolution,
    keys: ReadonlyArray<{ method: string; path: string; version: string }> | null,
  ): Promise<RuntimeTotalRow[]> {
    return this.db.query(
      `SELECT e.id AS "endpointId", b.method, b.path, b.version,
              sum(b.requests)::text AS requests, sum(b.server_errors)::text AS "serverErrors",
              runtime_histogram_sum(b.ttfb) AS ttfb, runtime_histogram_sum(b.ttlb) AS ttlb
         FROM ${runtimeRows('$8', '$4')} b
         JOIN endpoints e ON e.project_id = b.project_id AND e.method = b.method AND e.path = b.path
        WHERE b.project_id = $1 AND b.environment_kind = $2 AND ($3::text IS NULL OR b.environment_name = $3)
          AND b.resolution = $8 AND b.bucket >= $4 AND b.version <> ''
          AND ($5::text[] IS NULL OR (b.method, b.path, b.version) IN
               (SELECT * FROM unnest($5::text[], $6::text[], $7::text[])))
        GROUP BY e.id, b.method, b.path, b.version
        ORDER BY b.path, b.method, b.version`,
      [
        projectId,
        kind,
        name,
        since,
        keys?.map((k) => k.method) ?? null,
        keys?.map((k) => k.path) ?? null,
        keys?.map((k) => k.version) ?? null,
        resolution,
      ],
    );
  }
}
