import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  countOfInterest,
  type EnvironmentKind,
  REQUIRED_INSTANCES,
  type Shape,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';
import { queryPrepared } from '../common/prepared';
import type { DocumentedEndpoint } from '../views/capture-views';
import type { EndpointKey } from '../views/view-cache';
import { type AggregatedRow, type BatchPart, writeBatchStatement } from './batch-statement';
import { INSTANCE_COLUMNS, type ObservationRow, ROW_COLUMNS } from './observed-shapes';

/** A capture row's columns as `CaptureRow` names them (counts as numbers). */
const CAPTURE_COLUMNS = `c.id, c.project_id AS "projectId", c.agent_id AS "agentId", c.environment_kind AS "environmentKind",
  c.environment_name AS "environmentName", c.pull_request AS "pullRequest", c.commit, c.build, c.reason,
  c.started_at AS "startedAt", c.ended_at AS "endedAt", c.rules,
  coalesce(c.unmatched_requests, 0)::float8 AS "unmatchedRequests", c.unmatched_paths AS "unmatchedPaths",
  coalesce(c.overflow_requests, 0)::float8 AS "overflowRequests"`;

/**
 * The week partition of capture `$1` of project `$2` (`observations.capture_created_at` is its
 * capture's `created_at`): read first, as an init plan, so PostgreSQL probes that one partition's
 * key instead of every week's (docs/operations.md, "Partitions of observations").
 */
const CAPTURE_PARTITION =
  'o.capture_created_at = (SELECT c.created_at FROM captures c WHERE c.id = $1 AND c.project_id = $2)';

/** First key of the advisory lock `open` takes on a capture id (the second is the id's hash). */
const CAPTURE_ID_LOCK = 0x5e_c7_ca_01;

/** One run of the observed app. The id is made by the agent, so a resent report is an upsert. */
export interface CaptureRow {
  id: string;
  projectId: string;
  agentId: string | null;
  environmentKind: EnvironmentKind;
  environmentName: string;
  pullRequest: string | null;
  commit: string | null;
  build: string | null;
  reason: string;
  startedAt: Date;
  endedAt: Date | null;
  /** The `ignoreRequests` entries in effect, as the agent reported them. */
  rules: string[];
  /** Requests that only got 404/405 on paths matching no template (noise, counted apart; docs/paths.md). */
  unmatchedRequests: number;
  /** Distinct such paths, as the agent last counted them (never the paths themselves). */
  unmatchedPaths: number;
  /** Requests of endpoints not kept because the capture had its cap of endpoints already (SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE). */
  overflowRequests: number;
}

/** A capture as its agent opens it (`hello`, `capture`). */
export interface NewCapture {
  id: string;
  projectId: string;
  agentId: string;
  environmentKind: string;
  environmentName: string;
  pullRequest: string | null;
  commit: string | null;
  build: string | null;
  reason: string;
  startedAt: string;
  rules: readonly string[];
}

/** What the batch statement answers: `claimed` false for a duplicate; `queuedId` its evidence's id in the queue (null: none queued). */
export interface WrittenBatch {
  claimed: boolean;
  queuedId: string | null;
}

/** A documented endpoint whose diff flag in a capture says it differs, or is stale. */
export interface DiffCandidate {
  endpointId: string;
  versionId: string;
  method: string;
  path: string;
  revision: string;
  stale: boolean;
}

/** A freshly computed diff flag, with the version and summary revision it was computed for. */
export interface DiffCheck {
  method: string;
  path: string;
  versionId: string;
  revision: string;
  differs: boolean;
}

/**
 * The observation rows (`o`) the views sum summaries from: all of capture `$1`'s, read straight
 * from its observations (every observation row has its endpoint's summary, written with the
 * endpoint's first row, moved and deleted with its rows; issue 20: joined with the summaries too,
 * a full read visited a heap page of `capture_endpoints` per endpoint, 5,675 pages for 10,000
 * endpoints in views.bench, beside 323 of observations), or only the `only` endpoints', each
 * found by its summary's primary key (their methods and paths become parameters
 * `firstParameter` and the next). Returns the FROM clause and its extra parameters.
 */
function summariesOf(
  only: readonly EndpointKey[] | undefined,
  firstParameter: number,
): { from: string; parameters: unknown[] } {
  const observations =
    'JOIN observations o ON o.capture_id = c.id AND o.project_id = c.project_id AND o.capture_created_at = c.created_at';
  if (only === undefined) return { from: `captures c ${observations}`, parameters: [] };
  return {
    from: `unnest($${firstParameter}::text[], $${firstParameter + 1}::text[]) AS k(method, path)
           JOIN capture_endpoints ce ON ce.capture_id = $1 AND ce.method = k.method AND ce.path = k.path
           JOIN captures c ON c.id = ce.capture_id AND c.project_id = ce.project_id
           ${observations} AND o.method = ce.method AND o.path = ce.path`,
    parameters: [only.map((e) => e.method), only.map((e) => e.path)],
  };
}

/** One folded observation row of a capture, as regrouping takes the rows it moves (`takeObservations`). */
export interface MovedRow extends Omit<AggregatedRow, 'path' | 'count' | 'first_seen' | 'last_seen'> {
  captureId: string;
  count: string;
  first_seen: Date;
  last_seen: Date;
  /** How many stored rows were folded into this one. */
  rows: number;
}

/** Unites name lists of the rows of a group (arrays of any length): with jsonpath, as array_agg cannot. */
const unitedNames = (column: string): string =>
  `(SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') FROM jsonb_array_elements_text(jsonb_path_query_array(jsonb_agg(to_jsonb(m.${column})), '$[*][*]')) x)`;

/**
 * Deletes a scope's observation rows under some literal paths and returns them folded by their
 * key without the path (capture, method, status, bodies): counts added, first and last seen the
 * extremes, name lists united, a note kept when any row has one, instance extras added (`sum_instances`).
 */
const TAKE_OBSERVATIONS = `
  WITH moved AS (
    DELETE FROM observations o USING captures c
     WHERE c.id = o.capture_id AND c.project_id = $1 AND o.project_id = c.project_id AND o.capture_created_at = c.created_at AND ($2::uuid IS NULL OR o.capture_id = $2) AND o.path = ANY($3::text[])
    RETURNING o.*
  )
  SELECT m.capture_id AS "captureId", m.method, m.status,
         m.request_content_type AS req_ct, m.request_shape AS req_fp, max(m.request_note) AS req_note,
         m.response_content_type AS res_ct, m.response_shape AS res_fp, max(m.response_note) AS res_note,
         ${unitedNames('query')} AS query, ${unitedNames('request_headers')} AS req_h, ${unitedNames('response_headers')} AS res_h,
         sum(m.count)::text AS count, min(m.first_seen) AS first_seen, max(m.last_seen) AS last_seen,
         count(*)::int AS rows,
         CASE WHEN sum(m.count) < ${REQUIRED_INSTANCES} THEN sum_instances(m.request_instances) END AS req_inst,
         CASE WHEN sum(m.count) < ${REQUIRED_INSTANCES} THEN sum_instances(m.response_instances) END AS res_inst
    FROM moved m
   GROUP BY m.capture_id, m.method, m.status, m.request_content_type, m.request_shape, m.response_content_type, m.response_shape
   ORDER BY m.capture_id`;

/**
 * All SQL of captures: capture rows, their endpoint summaries (`capture_endpoints`), observation
 * rows and the shapes they reference, raw SQL in one style. The API reads them; ingest opens, ends
 * and re-rules captures and writes batches (`writeBatch`, the statement of captures/batch-statement.ts),
 * and so does regrouping, which also moves a scope's rows under literal paths (the "regrouping"
 * methods below). Methods taking a `runner` run in the caller's transaction when given one.
 */
@Injectable()
export class CapturesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A project's capture, or null (read in `runner`'s transaction when given one). */
  async byId(projectId: string, id: string, runner: Queryable = this.db): Promise<CaptureRow | null> {
    const [capture] = (await runner.query(
      `SELECT ${CAPTURE_COLUMNS} FROM captures c WHERE c.id = $1 AND c.project_id = $2`,
      [id, projectId],
    )) as CaptureRow[];
    return capture ?? null;
  }

  /** A project's captures newest first (at most `limit`), started before `before` when given. */
  list(projectId: string, limit: number, before?: Date): Promise<CaptureRow[]> {
    return this.db.query(
      `SELECT ${CAPTURE_COLUMNS} FROM captures c
        WHERE c.project_id = $1 AND ($3::timestamptz IS NULL OR c.started_at < $3)
        ORDER BY c.started_at DESC, c.id DESC LIMIT $2`,
      [projectId, limit, before ?? null],
    );
  }

  /**
   * The CI captures of a pull request, newest first (at most `limit`): all of them, or those of
   * one commit.
   */
  ciCaptures(projectId: string, pullRequest: string, commit: string | null, limit: number): Promise<CaptureRow[]> {
    return this.db.query(
      `SELECT ${CAPTURE_COLUMNS} FROM captures c
        WHERE c.project_id = $1 AND c.environment_kind = 'ci' AND c.pull_request = $2 AND ($3::text IS NULL OR c.commit = $3)
        ORDER BY c.started_at DESC LIMIT $4`,
      [projectId, pullRequest, commit, limit],
    );
  }

  /**
   * When a pull request's CI captures other than `counted`, started before `before`, last saw
   * traffic (their end, or their newest exchange's last sight, or their start), if any of them did
   * at or after `from`; null when none did.
   */
  async lastActivityOfOthers(
    projectId: string,
    pullRequest: string,
    counted: readonly string[],
    before: Date,
    from: Date,
  ): Promise<Date | null> {
    const [row] = (await this.db.query(
      `SELECT max(greatest(c.started_at, c.ended_at,
                           (SELECT max(o.last_seen) FROM observations o
                             WHERE o.capture_id = c.id AND o.project_id = c.project_id AND o.capture_created_at = c.created_at))) AS "at"
         FROM captures c
        WHERE c.project_id = $1 AND c.environment_kind = 'ci' AND c.pull_request = $2
          AND c.id <> ALL($3::uuid[]) AND c.started_at <= $4 AND coalesce(c.ended_at, 'infinity') >= $5`,
      [projectId, pullRequest, counted, before, from],
    )) as Array<{ at: Date | null }>;
    const at = row?.at ?? null;
    return at === null || at.getTime() < from.getTime() ? null : at;
  }

  /**
   * Summaries of a capture's endpoints (unsorted, one row per endpoint): all of them, or `only`
   * those endpoints'; with `undocumentedIn` (a project id), only endpoints without documentation there.
   * An endpoint's interactions and count of interest are added up from its observation rows (per
   * pair of content types, then counted by the shared definition, `countOfInterest`): the batch
   * statement writes a summary only when an endpoint is new or its names grow (issue 20).
   */
  async summaries(
    captureId: string,
    only: readonly EndpointKey[] | undefined,
    undocumentedIn: string | undefined,
  ): Promise<UndocumentedEndpointResponse[]> {
    const summaries = summariesOf(only, undocumentedIn === undefined ? 2 : 3);
    const undocumented = `AND NOT EXISTS (SELECT 1 FROM endpoints e
                                           WHERE e.project_id = $2 AND e.method = o.method AND e.path = o.path AND e.current_version_id IS NOT NULL)`;
    const rows = (await this.db.query(
      `SELECT o.method, o.path, o.request_content_type AS req_ct, o.response_content_type AS res_ct, sum(o.count)::float8 AS count
         FROM ${summaries.from}
        WHERE c.id = $1 ${undocumentedIn === undefined ? '' : undocumented}
        GROUP BY o.method, o.path, o.request_content_type, o.response_content_type`,
      [captureId, ...(undocumentedIn === undefined ? [] : [undocumentedIn]), ...summaries.parameters],
    )) as Array<{ method: string; path: string; req_ct: string | null; res_ct: string | null; count: number }>;
    const byEndpoint = new Map<string, UndocumentedEndpointResponse>();
    for (const row of rows) {
      const key = `${row.method} ${row.path}`;
      let summary = byEndpoint.get(key);
      if (summary === undefined)
        byEndpoint.set(key, (summary = { method: row.method, path: row.path, interactions: 0, count: 0 }));
      summary.interactions += row.count;
      summary.count += countOfInterest({
        request: row.req_ct === null ? null : { contentType: row.req_ct },
        response: row.res_ct === null ? null : { contentType: row.res_ct },
        count: row.count,
      });
    }
    return [...byEndpoint.values()];
  }

  /**
   * The documented endpoints of a capture whose diff flag says they differ or is stale (computed
   * for another version, or an older revision of the summary): all of project `projectId`'s, or
   * `only` those (as the views know them).
   */
  diffCandidates(
    captureId: string,
    projectId: string,
    only: readonly DocumentedEndpoint[] | undefined,
  ): Promise<DiffCandidate[]> {
    // The documented endpoints (d): all of the project's, or `only` those, each with its summary.
    const documented =
      only === undefined
        ? {
            from: 'capture_endpoints ce JOIN endpoints d ON d.project_id = $2 AND d.method = ce.method AND d.path = ce.path AND d.current_version_id IS NOT NULL',
            parameters: [projectId],
          }
        : {
            from: `unnest($2::text[], $3::text[], $4::uuid[], $5::uuid[]) AS d(method, path, id, current_version_id)
                   JOIN capture_endpoints ce ON ce.capture_id = $1 AND ce.method = d.method AND ce.path = d.path`,
            parameters: [
              only.map((e) => e.method),
              only.map((e) => e.path),
              only.map((e) => e.endpointId),
              only.map((e) => e.versionId),
            ],
          };
    return this.db.query(
      `SELECT d.id AS "endpointId", d.current_version_id AS "versionId", ce.method, ce.path, ce.revision::text AS revision,
              (ce.checked_version IS DISTINCT FROM d.current_version_id OR ce.checked_revision IS DISTINCT FROM ce.revision) AS stale
         FROM ${documented.from}
        WHERE ce.capture_id = $1
          AND (ce.differs IS NOT FALSE OR ce.checked_version IS DISTINCT FROM d.current_version_id OR ce.checked_revision IS DISTINCT FROM ce.revision)`,
      [captureId, ...documented.parameters],
    );
  }

  /**
   * The observation rows of some endpoints of a project's capture: for each endpoint, one probe of
   * the key in its capture's partition (`OFFSET 0` keeps the subquery a loop per endpoint; joined
   * flat, the planner read every row of the capture and filtered them).
   */
  observationRows(projectId: string, captureId: string, endpoints: readonly EndpointKey[]): Promise<ObservationRow[]> {
    return this.db.query(
      `SELECT o.* FROM unnest($3::text[], $4::text[]) AS w(method, path)
        CROSS JOIN LATERAL (
          SELECT ${ROW_COLUMNS}, ${INSTANCE_COLUMNS}, o.count::float8 AS count FROM observations o
           WHERE o.capture_id = $1 AND o.project_id = $2 AND ${CAPTURE_PARTITION} AND o.method = w.method AND o.path = w.path
          OFFSET 0) o`,
      [captureId, projectId, endpoints.map((e) => e.method), endpoints.map((e) => e.path)],
    );
  }

  /** The observation rows of one endpoint of a project's capture, with their query and request header names. */
  endpointObservations(
    projectId: string,
    captureId: string,
    method: string,
    path: string,
  ): Promise<Array<ObservationRow & { query: string[]; requestHeaders: string[] }>> {
    return this.db.query(
      `SELECT ${ROW_COLUMNS}, ${INSTANCE_COLUMNS}, o.count::float8 AS count
         FROM observations o
        WHERE o.capture_id = $1 AND o.project_id = $2 AND ${CAPTURE_PARTITION} AND o.method = $3 AND o.path = $4`,
      [captureId, projectId, method, path],
    );
  }

  /**
   * Stores freshly computed diff flags with the version and revision they were computed for. The
   * revision was read before the observation rows, so a key committed in between leaves the flag
   * stale (recomputed next time), never wrongly fresh. Rows an ingest transaction holds are
   * skipped rather than waited for (no lock-order deadlock with ingest; they stay stale).
   */
  async recordChecks(captureId: string, checked: readonly DiffCheck[]): Promise<void> {
    await this.db.query(
      `UPDATE capture_endpoints ce SET checked_version = c.version_id, checked_revision = c.revision, differs = c.differs
          FROM unnest($2::text[], $3::text[], $4::uuid[], $5::bigint[], $6::boolean[]) AS c(method, path, version_id, revision, differs)
        WHERE ce.capture_id = $1 AND ce.method = c.method AND ce.path = c.path
          AND (ce.capture_id, ce.method, ce.path) IN (SELECT capture_id, method, path FROM capture_endpoints
                                                       WHERE capture_id = $1 AND (method, path) IN (SELECT * FROM unnest($2::text[], $3::text[]))
                                                         FOR UPDATE SKIP LOCKED)`,
      [
        captureId,
        checked.map((c) => c.method),
        checked.map((c) => c.path),
        checked.map((c) => c.versionId),
        checked.map((c) => c.revision),
        checked.map((c) => c.differs),
      ],
    );
  }

  /**
   * The stored shapes of some fingerprints (unknown fingerprints have no row), read through
   * `runner` when given: a transaction sees the shapes it wrote before they are committed.
   */
  shapes(
    fingerprints: readonly string[],
    runner: Queryable = this.db,
  ): Promise<Array<{ fingerprint: string; shape: Shape }>> {
    return runner.query('SELECT fingerprint, shape FROM shapes WHERE fingerprint = ANY($1::text[])', [fingerprints]);
  }

  /** Which of some fingerprints are stored (shapes are never deleted), without reading the shapes. */
  async storedFingerprints(fingerprints: readonly string[]): Promise<string[]> {
    const rows = (await this.db.query('SELECT fingerprint FROM shapes WHERE fingerprint = ANY($1::text[])', [
      fingerprints,
    ])) as Array<{ fingerprint: string }>;
    return rows.map((row) => row.fingerprint);
  }

  /**
   * Records a capture, or re-opens it for the agent and environment that opened it (the rules
   * replaced). A capture's key is (id, project_id), as a distributed PostgreSQL needs; its id is
   * the agent's, and is kept unique over all projects here: under a lock on the id, an id another
   * project has is refused like one of another agent.
   * @returns whether the row is new, or null when the id is another project's, agent's or environment's.
   */
  open(capture: NewCapture): Promise<{ created: boolean } | null> {
    return this.db.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CAPTURE_ID_LOCK, capture.id]);
      const [row] = (await manager.query(
        `INSERT INTO captures (id, project_id, agent_id, environment_kind, environment_name, pull_request, commit, build, reason, started_at, rules)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
          WHERE NOT EXISTS (SELECT FROM captures WHERE id = $1 AND project_id <> $2)
         ON CONFLICT (id, project_id) DO UPDATE SET rules = EXCLUDED.rules
           WHERE captures.agent_id = EXCLUDED.agent_id
             AND captures.environment_kind = EXCLUDED.environment_kind AND captures.environment_name = EXCLUDED.environment_name
         RETURNING (xmax = 0) AS created`,
        [
          capture.id,
          capture.projectId,
          capture.agentId,
          capture.environmentKind,
          capture.environmentName,
          capture.pullRequest,
          capture.commit,
          capture.build,
          capture.reason,
          capture.startedAt,
          capture.rules,
        ],
      )) as Array<{ created: boolean }>;
      return row ?? null;
    });
  }

  /**
   * Whether a project's capture was opened by this agent row and environment (kind and name).
   * @returns null when the project has no such capture.
   */
  async isOwnedBy(
    projectId: string,
    captureId: string,
    owner: { agentId: string; environmentKind: string; environmentName: string },
  ): Promise<boolean | null> {
    const [found] = (await this.db.query(
      `SELECT (agent_id IS NOT DISTINCT FROM $3 AND environment_kind = $4 AND environment_name = $5) AS own
         FROM captures WHERE id = $1 AND project_id = $2`,
      [captureId, projectId, owner.agentId, owner.environmentKind, owner.environmentName],
    )) as Array<{ own: boolean }>;
    return found === undefined ? null : found.own;
  }

  /** Ends a project's capture at `endedAt` (a capture already ended keeps its end). */
  async end(projectId: string, captureId: string, endedAt: string): Promise<void> {
    await this.db.query('UPDATE captures SET ended_at = $3 WHERE id = $1 AND project_id = $2 AND ended_at IS NULL', [
      captureId,
      projectId,
      endedAt,
    ]);
  }

  /** Replaces the ignore rules in effect for a project's capture. */
  async setRules(projectId: string, captureId: string, rules: readonly string[]): Promise<void> {
    await this.db.query('UPDATE captures SET rules = $3 WHERE id = $1 AND project_id = $2', [
      captureId,
      projectId,
      rules,
    ]);
  }

  // ---- regrouping (paths/regroup.service.ts), each in its transaction: a scope is capture
  // `captureId` of project `projectId`, or every capture of the project when null.

  /** The paths `pattern` (a LIKE pattern) matches, other than `except`, that a scope's summaries are under, each once. */
  async pathsLike(
    projectId: string,
    captureId: string | null,
    pattern: string,
    except: string,
    runner: Queryable,
  ): Promise<string[]> {
    const rows = (await runner.query(
      `SELECT DISTINCT ce.path FROM capture_endpoints ce JOIN captures c ON c.id = ce.capture_id
        WHERE c.project_id = $1 AND ($2::uuid IS NULL OR ce.capture_id = $2) AND ce.path LIKE $3 AND ce.path <> $4`,
      [projectId, captureId, pattern, except],
    )) as Array<{ path: string }>;
    return rows.map((row) => row.path);
  }

  /**
   * Deletes a scope's observation rows under `literals` and returns them folded by key without the
   * path (see `TAKE_OBSERVATIONS`), to be written again under the template through `writeBatch`.
   */
  takeObservations(
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    runner: Queryable,
  ): Promise<MovedRow[]> {
    return runner.query(TAKE_OBSERVATIONS, [projectId, captureId, literals]);
  }

  /** Deletes a scope's capture summaries under `literals` (and takes them off their captures' counts, `capture_endpoint_counts`). @returns how many were deleted. */
  async deleteSummaries(
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    runner: Queryable,
  ): Promise<number> {
    const [summaries] = (await runner.query(
      `WITH gone AS (
         DELETE FROM capture_endpoints ce USING captures c
          WHERE c.id = ce.capture_id AND c.project_id = $1 AND ($2::uuid IS NULL OR ce.capture_id = $2) AND ce.path = ANY($3::text[])
         RETURNING ce.capture_id
       ), counted AS (
         INSERT INTO capture_endpoint_counts AS n (project_id, capture_id, slot, endpoints)
         SELECT $1, capture_id, pg_backend_pid(), -count(*)::integer FROM gone GROUP BY capture_id ORDER BY capture_id
         ON CONFLICT (capture_id, slot, project_id) DO UPDATE SET endpoints = n.endpoints + EXCLUDED.endpoints
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [projectId, captureId, literals],
    )) as Array<{ deleted: number }>;
    return summaries?.deleted ?? 0;
  }

  /** Renames `literals` to `template` in the touched keys the scope's committed batches recorded. */
  async renameTouchedPaths(
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    template: string,
    runner: Queryable,
  ): Promise<void> {
    await runner.query(
      `UPDATE processed_batches b
          SET touched_paths = ARRAY(SELECT CASE WHEN t.path = ANY($3::text[]) THEN $4 ELSE t.path END FROM unnest(b.touched_paths) WITH ORDINALITY AS t(path, i) ORDER BY t.i)
        WHERE b.project_id = $1 AND ($2::uuid IS NULL OR b.capture_id = $2) AND b.touched_paths && $3::text[]`,
      [projectId, captureId, literals, template],
    );
  }

  /** Makes a committed batch's touched keys unknown, so views kept of its capture are computed again in full. */
  async forgetTouched(batchId: string, runner: Queryable): Promise<void> {
    await runner.query(
      'UPDATE processed_batches SET touched_methods = NULL, touched_paths = NULL WHERE batch_id = $1',
      [batchId],
    );
  }

  /**
   * Runs the batch statement of `parts` (`writeBatchStatement`: one batch, or several of distinct
   * captures and ids), in `runner`'s transaction when given one. Answers each part in order:
   * `captured` false when its capture no longer exists (nothing of it was written).
   */
  async writeBatches(
    parts: readonly BatchPart[],
    runner: Queryable = this.db,
  ): Promise<Array<WrittenBatch & { captured: boolean }>> {
    const { name, text, values } = writeBatchStatement(parts);
    // Named: parsed once per connection, not for every batch (half its PostgreSQL CPU, issue 20).
    const rows = await queryPrepared<{ claimed: boolean; captured: boolean; queued: string | null }>(
      runner,
      name,
      text,
      values,
    );
    if (rows.length !== parts.length)
      throw new Error(`batch statement answered ${rows.length} of ${parts.length} batches`);
    return rows.map((row) => ({ claimed: row.claimed, captured: row.captured, queuedId: row.queued }));
  }

  /** Runs the batch statement of one batch (`writeBatches`). @throws Error when its capture no longer exists. */
  async writeBatch(part: BatchPart, runner: Queryable = this.db): Promise<WrittenBatch> {
    const [answer] = await this.writeBatches([part], runner);
    return writtenBatch(answer, part.captureId);
  }
}

/**
 * What the batch statement answered for one batch (see `writeBatches`).
 * @throws Error when it answered nothing, or when the batch's capture no longer exists.
 */
export function writtenBatch(
  answer: (WrittenBatch & { captured: boolean }) | undefined,
  captureId: string,
): WrittenBatch {
  if (answer === undefined) throw new Error('batch statement returned nothing');
  // Deleted meanwhile (retention): nothing was written; failed as its foreign keys failed it.
  if (!answer.captured) throw new Error(`capture ${captureId} no longer exists`);
  return { claimed: answer.claimed, queuedId: answer.queuedId };
}
