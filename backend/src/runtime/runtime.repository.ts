import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { MatrixKind, WireHistogram } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';

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

/** Merged counts of one version over one step. */
export interface RuntimeStepRow {
  version: string;
  at: Date;
  requests: string;
  serverErrors: string;
  upstreamFailures: string;
  clientLeft: string;
  ttfb: WireHistogram;
  ttlb: WireHistogram;
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

export type RuntimeResolution = 'minute' | 'hour' | 'day';

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

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';
const CELL_KEY = 'project_id, environment_kind, environment_name, method, path';

/**
 * Adds a batch's minutes in one statement: parallel arrays (`unnest`), each row under the version
 * the environment row's evidence cell names for its endpoint (`''` when there is none: an
 * undocumented endpoint, or no cell yet). Rows are written in key order, so concurrent batches lock
 * them in the same order.
 */
const ADD_MINUTES = `
  INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT $1::uuid, r.method, r.path, $2::text, $3::text, coalesce(c.version, ''), 'minute', r.minute,
         r.requests, r.server_errors, r.upstream_failures, r.client_left, r.ttfb::jsonb, r.ttlb::jsonb
    FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[],
                $11::text[], $12::text[])
         AS r(method, path, minute, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
    LEFT JOIN endpoints e ON e.project_id = $1::uuid AND e.method = r.method AND e.path = r.path
    LEFT JOIN environment_rows er ON er.project_id = $1::uuid AND er.kind = $2::text AND er.name = $3::text
    LEFT JOIN evidence_cells c ON c.row_id = er.id AND c.endpoint_id = e.id
   ORDER BY r.method COLLATE "C", r.path COLLATE "C", r.minute
  ON CONFLICT (${KEY}) DO UPDATE SET ${ADD_COLUMNS}`;

/**
 * Adds a batch's minutes to the environment row's cells (`runtime_cells`: every exchange since the
 * row began, per endpoint), one row per endpoint in key order. Run after ADD_MINUTES in the same
 * transaction, so concurrent batches of a row lock both tables in the same order.
 */
const ADD_CELLS = `
  INSERT INTO runtime_cells AS c (${CELL_KEY}, requests, server_errors, ttlb)
  SELECT $1::uuid, $2::text, $3::text, r.method, r.path, sum(r.requests), sum(r.server_errors),
         runtime_histogram_sum(r.ttlb::jsonb)
    FROM unnest($4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::text[]) AS r(method, path, requests, server_errors, ttlb)
   GROUP BY r.method, r.path
   ORDER BY r.method COLLATE "C", r.path COLLATE "C"
  ON CONFLICT (${CELL_KEY}) DO UPDATE SET
    requests = c.requests + EXCLUDED.requests,
    server_errors = c.server_errors + EXCLUDED.server_errors,
    ttlb = runtime_histogram_add(c.ttlb, EXCLUDED.ttlb)`;

/**
 * Moves rows of `$1` resolution older than `$2` (at most `$4` of them) into rows of `$3`
 * resolution, added to what those hold: the deleted rows are the ones added, so each is counted
 * once, whichever replica runs it and however often.
 */
const MOVE = `
  WITH moved AS (
    DELETE FROM runtime_buckets
     WHERE ctid IN (SELECT ctid FROM runtime_buckets WHERE resolution = $1 AND bucket < $2 LIMIT $4)
    RETURNING *
  ), written AS (
    INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
    SELECT project_id, method, path, environment_kind, environment_name, version, $3::text,
           date_trunc($3::text, bucket, 'UTC'),
           sum(requests), sum(server_errors), sum(upstream_failures), sum(client_left),
           runtime_histogram_sum(ttfb), runtime_histogram_sum(ttlb)
      FROM moved
     GROUP BY project_id, method, path, environment_kind, environment_name, version, date_trunc($3::text, bucket, 'UTC')
    ON CONFLICT (${KEY}) DO UPDATE SET ${ADD_COLUMNS}
  )
  SELECT count(*)::int AS moved FROM moved`;

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
  INSERT INTO runtime_cells AS c (${CELL_KEY}, requests, server_errors, ttlb)
  SELECT project_id, environment_kind, environment_name, method, $3::text, sum(requests), sum(server_errors),
         runtime_histogram_sum(ttlb)
    FROM moved
   GROUP BY project_id, environment_kind, environment_name, method
  ON CONFLICT (${CELL_KEY}) DO UPDATE SET
    requests = c.requests + EXCLUDED.requests,
    server_errors = c.server_errors + EXCLUDED.server_errors,
    ttlb = runtime_histogram_add(c.ttlb, EXCLUDED.ttlb)`;

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

/** The SQL of runtime evidence (`runtime_buckets`), raw SQL in one style. */
@Injectable()
export class RuntimeRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Adds a batch's minutes of one environment row, in the batch's transaction. */
  async addMinutes(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    environment: { kind: MatrixKind; name: string },
    minutes: readonly RuntimeMinute[],
  ): Promise<void> {
    if (minutes.length === 0) return;
    await manager.query(ADD_MINUTES, [
      projectId,
      environment.kind,
      environment.name,
      minutes.map((m) => m.method),
      minutes.map((m) => m.path),
      minutes.map((m) => m.minute),
      minutes.map((m) => m.requests),
      minutes.map((m) => m.serverErrors),
      minutes.map((m) => m.upstreamFailures),
      minutes.map((m) => m.clientLeft),
      minutes.map((m) => JSON.stringify(m.ttfb)),
      minutes.map((m) => JSON.stringify(m.ttlb)),
    ]);
    await manager.query(ADD_CELLS, [
      projectId,
      environment.kind,
      environment.name,
      minutes.map((m) => m.method),
      minutes.map((m) => m.path),
      minutes.map((m) => m.requests),
      minutes.map((m) => m.serverErrors),
      minutes.map((m) => JSON.stringify(m.ttlb)),
    ]);
  }

  /**
   * Moves at most `limit` rows of `from` resolution older than `before` into `to` rows.
   * @returns how many rows were moved.
   */
  async move(from: RuntimeResolution, to: RuntimeResolution, before: Date, limit: number): Promise<number> {
    const [{ moved }] = (await this.db.query(MOVE, [from, before, to, limit])) as [{ moved: number }];
    return moved;
  }

  /** Moves the rows of `literals` into `template` (see REGROUP), in the regrouping's transaction. @returns how many. */
  async regroup(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    const [{ moved }] = (await manager.query(REGROUP, [projectId, literals, template, rowIds])) as [{ moved: number }];
    await manager.query(REGROUP_CELLS, [projectId, literals, template, rowIds]);
    return moved;
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

  /** The method and path of a project's endpoint, or null when it has none with this id. */
  async route(projectId: string, id: string): Promise<{ method: string; path: string } | null> {
    const [row] = (await this.db.query('SELECT method, path FROM endpoints WHERE id = $1 AND project_id = $2', [
      id,
      projectId,
    ])) as Array<{ method: string; path: string }>;
    return row ?? null;
  }

  /** The id of a project's documented endpoint `method path`, or null (an undocumented endpoint has none). */
  async endpointId(projectId: string, method: string, path: string): Promise<string | null> {
    const [row] = (await this.db.query('SELECT id FROM endpoints WHERE project_id = $1 AND method = $2 AND path = $3', [
      projectId,
      method,
      path,
    ])) as Array<{ id: string }>;
    return row?.id ?? null;
  }

  /** Deletes rows of `resolution` older than `before`. @returns how many. */
  async prune(resolution: RuntimeResolution, before: Date): Promise<number> {
    const [{ deleted }] = (await this.db.query(
      `WITH pruned AS (DELETE FROM runtime_buckets WHERE resolution = $1 AND bucket < $2 RETURNING 1)
       SELECT count(*)::int AS deleted FROM pruned`,
      [resolution, before],
    )) as [{ deleted: number }];
    return deleted;
  }

  /**
   * One endpoint's rows in one environment since `since`, merged per version and step of
   * `stepSeconds` (a row of a coarser resolution falls in the step its start is in).
   */
  steps(scope: RuntimeScope, stepSeconds: number): Promise<RuntimeStepRow[]> {
    return this.db.query(
      `SELECT version, date_bin(make_interval(secs => $7), bucket, 'epoch'::timestamptz) AS at,
              sum(requests)::text AS requests, sum(server_errors)::text AS "serverErrors",
              sum(upstream_failures)::text AS "upstreamFailures", sum(client_left)::text AS "clientLeft",
              runtime_histogram_sum(ttfb) AS ttfb, runtime_histogram_sum(ttlb) AS ttlb
         FROM runtime_buckets
        WHERE project_id = $1 AND method = $2 AND path = $3 AND environment_kind = $4
          AND ($5::text IS NULL OR environment_name = $5) AND bucket >= $6
        GROUP BY version, at
        ORDER BY version, at`,
      [scope.projectId, scope.method, scope.path, scope.kind, scope.name, scope.since, stepSeconds],
    );
  }

  /** Requests per version and step of `stepSeconds` in one environment since `since`, every endpoint together. */
  shareSteps(scope: RuntimeEnvironmentScope, stepSeconds: number): Promise<ShareStepRow[]> {
    return this.db.query(
      `SELECT version, date_bin(make_interval(secs => $5), bucket, 'epoch'::timestamptz) AS at,
              sum(requests)::text AS requests
         FROM runtime_buckets
        WHERE project_id = $1 AND environment_kind = $2 AND ($3::text IS NULL OR environment_name = $3) AND bucket >= $4
        GROUP BY version, at
        ORDER BY version, at`,
      [scope.projectId, scope.kind, scope.name, scope.since, stepSeconds],
    );
  }

  /** Requests per endpoint and version in one environment since `since` (the id null for an undocumented endpoint). */
  shareEndpoints(scope: RuntimeEnvironmentScope): Promise<ShareEndpointRow[]> {
    return this.db.query(
      `SELECT e.id AS "endpointId", b.method, b.path, b.version, sum(b.requests)::text AS requests
         FROM runtime_buckets b
         LEFT JOIN endpoints e ON e.project_id = b.project_id AND e.method = b.method AND e.path = b.path
        WHERE b.project_id = $1 AND b.environment_kind = $2 AND ($3::text IS NULL OR b.environment_name = $3)
          AND b.bucket >= $4
        GROUP BY e.id, b.method, b.path, b.version`,
      [scope.projectId, scope.kind, scope.name, scope.since],
    );
  }

  /**
   * The counts of documented endpoints in one environment since `since`, summed per endpoint and
   * version (rows under no version left out): of one row (`name`, e.g. `PR #42`) or every row of
   * the kind, and of the given (method, path, version) keys only, or of all.
   */
  totals(
    projectId: string,
    kind: MatrixKind,
    name: string | null,
    since: Date,
    keys: ReadonlyArray<{ method: string; path: string; version: string }> | null,
  ): Promise<RuntimeTotalRow[]> {
    return this.db.query(
      `SELECT e.id AS "endpointId", b.method, b.path, b.version,
              sum(b.requests)::text AS requests, sum(b.server_errors)::text AS "serverErrors",
              runtime_histogram_sum(b.ttfb) AS ttfb, runtime_histogram_sum(b.ttlb) AS ttlb
         FROM runtime_buckets b
         JOIN endpoints e ON e.project_id = b.project_id AND e.method = b.method AND e.path = b.path
        WHERE b.project_id = $1 AND b.environment_kind = $2 AND ($3::text IS NULL OR b.environment_name = $3)
          AND b.bucket >= $4 AND b.version <> ''
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
      ],
    );
  }
}
