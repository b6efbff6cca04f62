import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { MATRIX_KINDS, type MatrixKind, type VersionMatrixRow } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { textArrayLiteral } from '../captures/batch-statement';
import { type ObservationRow, ROW_COLUMNS as OBSERVATION_COLUMNS } from '../captures/observed-shapes';
import { queryPrepared } from '../common/prepared';
import type { Queryable } from '../common/queryable';
import type { EndpointRef } from '../versions/versions.repository';
import type { CellValue } from './cell';
import type { EnvironmentRowKey } from './environment-row';
import { unpackList } from './queued-payload';

/** An environment row as stored. */
export interface EnvironmentRow extends EnvironmentRowKey {
  id: string;
  firstSeen: Date;
}

/** The columns of `EnvironmentRow`. */
const ROW_COLUMNS = `id, kind, name, scope, pull_request AS "pullRequest", build, commit, first_seen AS "firstSeen"`;

/** One distinct exchange as evidence keeps it (only the header names worth documenting). */
export interface EvidenceExchangeRow {
  method: string;
  path: string;
  status: number;
  req_ct: string | null;
  req_fp: string | null;
  res_ct: string | null;
  res_fp: string | null;
  count: number;
  last_seen: string;
  query: string[] | null;
  req_h: string[] | null;
}

/** An exchange about to be added to a row, with the commit and build of the first batch of the fold that had it. */
export type FoldedExchangeRow = EvidenceExchangeRow & { commit: string | null; build: string | null };

/**
 * A batch's evidence as queued until a fold takes it (`evidence_queue`). Its lists are unpacked
 * from their stored JSON each time they are read (`TakenBatch`): a fold reads each once, as it
 * takes them, and keeps only what they fold into.
 */
export interface QueuedBatch {
  readonly build: string | null;
  readonly commit: string | null;
  readonly lastSeen: string;
  readonly exchanges: EvidenceExchangeRow[];
  /** Runtime minutes (runtime/): evidence keeps them for the fold and rewrites their paths, nothing more. */
  readonly minutes: Array<{ method: string; path: string }>;
  /** Consumer days (consumers/): kept for the fold and their paths rewritten, as the minutes. */
  readonly consumers: Array<{ method: string; path: string }>;
}

/**
 * A batch a fold took, holding its lists as stored (packed JSON text, queued-payload.ts) and
 * unpacking one when it is read. Issue 20: unpacked at the take, a fold's batches (up to
 * FOLD_BYTES of packed text, several times that as objects) lived through every statement of the
 * fold's transaction, seconds under load, so the replica's young-generation collections copied
 * them and promoted them into the old generation meanwhile.
 */
class TakenBatch implements QueuedBatch {
  constructor(
    readonly build: string | null,
    readonly commit: string | null,
    readonly lastSeen: string,
    private readonly packed: { exchanges: string; minutes: string; consumers: string },
  ) {}

  get exchanges(): EvidenceExchangeRow[] {
    return unpackList(this.packed.exchanges);
  }

  get minutes(): Array<{ method: string; path: string }> {
    return unpackList(this.packed.minutes);
  }

  get consumers(): Array<{ method: string; path: string }> {
    return unpackList(this.packed.consumers);
  }
}

/**
 * A stored distinct exchange of a row, as conformance reads it, with the commit and build of the
 * batch that first brought it there (null when not known: kept before they were, or not sent).
 */
export type StoredExchange = ObservationRow & { lastSeen: Date; firstCommit: string | null; firstBuild: string | null };

/** A cell's value for one endpoint. */
export type EndpointCell = CellValue & { endpointId: string };

/** A cell to write: its value and the newest evidence behind it. */
export type NewCell = EndpointCell & { lastSeen: string };

/** "What runs there now" for one endpoint, as stored. */
export interface CurrentCell {
  endpointId: string;
  rowId: string;
  rowFirstSeen: Date;
  version: string;
  drift: boolean;
}

/** An environment row of a matrix page, with its stored cells text (views/matrix-texts.ts). */
export type StoredMatrixRow = Omit<VersionMatrixRow, 'lastSeen'> & {
  id: string;
  lastSeen: Date;
  cellsJson: string | null;
  cellsColumns: number | null;
};

/** The version of one documented endpoint an environment runs now, from its newest evidence there. */
export interface CurrentVersion {
  endpointId: string;
  method: string;
  path: string;
  /** Null when never seen there (or the version was deleted). */
  versionId: string | null;
  version: string | null;
  drift: boolean | null;
  row: string | null;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  lastSeen: Date | null;
}

/**
 * What a row shows of some endpoints' removal: every call it has evidence of, and the calls of those
 * endpoints answered with another status than the removed ones (404, 405, 410), per status, most first.
 */
export interface RemovalEvidence {
  calls: number;
  served: Array<{ status: number; calls: number }>;
}

/** The key of a distinct exchange: method, path, status, content types and shape fingerprints. */
export type ExchangeKeyRow = Pick<
  EvidenceExchangeRow,
  'method' | 'path' | 'status' | 'req_ct' | 'req_fp' | 'res_ct' | 'res_fp'
>;

/** Exchanges whose first rows are asked for (`firstRowsShowing`): group `n`, one exchange key. */
export type WantedExchange = ExchangeKeyRow & { n: number };

/**
 * The first row of one kind whose evidence has an exchange of group `n`, when it first had it, and
 * the commit and build of the batch that brought it there (the row's own when not known).
 */
export interface RowShowing {
  n: number;
  kind: MatrixKind;
  name: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  firstSeen: Date;
}

/**
 * The origins recomputed from the evidence of every row joined to its row (not from the kind and
 * first evidence each exchange keeps of its row): per project, distinct exchange and kind, the row
 * that had it first. `$1` the project, `$2` the paths (null: every path).
 */
const ORIGINS_OF_EVIDENCE = `
  SELECT DISTINCT ON (o.method, o.path, o.status, coalesce(o.request_content_type, ' '), coalesce(o.request_shape, ' '),
                      coalesce(o.response_content_type, ' '), coalesce(o.response_shape, ' '), r.kind)
         o.project_id, r.kind, o.method, o.path, o.status, o.request_content_type, o.request_shape, o.response_content_type,
         o.response_shape, r.id AS row_id, r.first_seen AS row_first_seen, o.first_seen, o.first_commit AS commit, o.first_build AS build
    FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id AND r.project_id = $1
   WHERE o.project_id = $1 AND ($2::text[] IS NULL OR o.path = ANY($2::text[]))
   ORDER BY o.method, o.path, o.status, coalesce(o.request_content_type, ' '), coalesce(o.request_shape, ' '),
            coalesce(o.response_content_type, ' '), coalesce(o.response_shape, ' '), r.kind, o.first_seen, r.first_seen, r.id`;

/** The conflict target of `evidence_observations`: one stored row per distinct exchange of an environment row. */
const OBSERVATION_KEY = `(row_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                    (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')), project_id)`;

/**
 * The union of a stored name list and an incoming one (sorted), as observations keep them; an
 * unknown (null) side leaves the other as it is.
 */
function unionOfNames(column: string): string {
  return `${column} = CASE WHEN EXCLUDED.${column} IS NULL OR EXCLUDED.${column} <@ o.${column} THEN o.${column} WHEN o.${column} IS NULL THEN EXCLUDED.${column}
                     ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.${column} || EXCLUDED.${column}) x ORDER BY x) END`;
}

/** What an exchange already stored gains from one more of the same key. */
const ADD_TO_OBSERVATION = `count = o.count + EXCLUDED.count, last_seen = greatest(o.last_seen, EXCLUDED.last_seen),
                     ${unionOfNames('query')}, ${unionOfNames('request_headers')}`;

/**
 * The name lists of folded rows `m` united, with jsonpath (an aggregate of arrays of different
 * lengths cannot be built directly); null when every list is unknown.
 */
function foldedNames(column: string): string {
  return `CASE WHEN bool_and(m.${column} IS NULL) THEN NULL
            ELSE (SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') FROM jsonb_array_elements_text(jsonb_path_query_array(jsonb_agg(to_jsonb(m.${column})), '$[*][*]')) x WHERE x IS NOT NULL) END`;
}

/**
 * Per exchange `w` (a set of wanted exchanges with their key columns) and kind `k`, the first row
 * whose evidence has it (by the exchange's `first_seen` there, then the row's first evidence, then
 * its id): one probe of `evidence_observations_origin_idx`, which orders a project's evidence of an
 * exchange and kind that way, however many rows have it. `$1` the project.
 */
const FIRST_ROW_OF = `LATERAL (
           SELECT o.row_id, o.row_first_seen, o.first_seen, o.first_commit AS commit, o.first_build AS build
             FROM evidence_observations o
            WHERE o.project_id = $1 AND o.method = w.method AND o.path = w.path AND o.status = w.status
              AND coalesce(o.request_content_type, ' ') = coalesce(w.req_ct, ' ') AND coalesce(o.request_shape, ' ') = coalesce(w.req_fp, ' ')
              AND coalesce(o.response_content_type, ' ') = coalesce(w.res_ct, ' ') AND coalesce(o.response_shape, ' ') = coalesce(w.res_fp, ' ')
              AND o.kind = k.kind
            ORDER BY o.first_seen, o.row_first_seen, o.row_id
            LIMIT 1) x`;

/**
 * How many origins of a project's exchanges, as `firstRowsShowing` reads them (from the kind and
 * first evidence each exchange keeps of its row, by index), differ from a recomputation from the
 * evidence of every row joined to its row (missing, extra, or another row, time, commit or build),
 * and how many there are: the check, for tests and benchmarks, that folds and regroupings keep
 * them exact.
 */
export async function originsDifferingFromEvidence(
  db: Queryable,
  projectId: string,
): Promise<{ stored: number; differing: number }> {
  const [row] = await db.query<Array<{ stored: number; differing: number }>>(
    `WITH e AS (${ORIGINS_OF_EVIDENCE}),
          w AS (SELECT DISTINCT method, path, status, request_content_type AS req_ct, request_shape AS req_fp,
                       response_content_type AS res_ct, response_shape AS res_fp
                  FROM evidence_observations WHERE project_id = $1),
          s AS (SELECT w.*, k.kind, x.* FROM w CROSS JOIN unnest($3::text[]) AS k(kind) CROSS JOIN ${FIRST_ROW_OF})
     SELECT (SELECT count(*) FROM s)::int AS stored,
            (SELECT count(*) FROM e FULL JOIN s
                ON (e.method, e.path, e.status, coalesce(e.request_content_type, ' '), coalesce(e.request_shape, ' '),
                    coalesce(e.response_content_type, ' '), coalesce(e.response_shape, ' '), e.kind)
                 = (s.method, s.path, s.status, coalesce(s.req_ct, ' '), coalesce(s.req_fp, ' '),
                    coalesce(s.res_ct, ' '), coalesce(s.res_fp, ' '), s.kind)
              WHERE (e.row_id, e.row_first_seen, e.first_seen, e.commit, e.build)
                    IS DISTINCT FROM (s.row_id, s.row_first_seen, s.first_seen, s.commit, s.build))::int AS differing`,
    [projectId, null, [...MATRIX_KINDS]],
  );
  return row ?? { stored: 0, differing: 0 };
}

/**
 * The SQL of runtime evidence, raw SQL in one style: environment rows (the matrix's rows), their
 * distinct exchanges (`evidence_observations`), cells (`evidence_cells`) and "what runs there
 * now" (`evidence_current`). Writers pass their transaction (`db`) so the statements run in it.
 * The documented endpoints and their versions are the versions domain's: the service reads them
 * through `VersionStore` (in the same transaction) and passes them in. The rows' matrix texts are
 * views/matrix-texts.ts's. Locking order: see EvidenceService.
 */
@Injectable()
export class EvidenceRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The pool: each statement through it is a transaction of its own. */
  get pool(): Queryable {
    return this.db;
  }

  /** Runs `work` in one transaction (READ COMMITTED), committed when it resolves. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** Runs `work` in one REPEATABLE READ transaction: everything it reads comes from one snapshot. */
  snapshot<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction('REPEATABLE READ', work);
  }

  // ---- environment rows

  /** Inserts the row when new (locking only a new row). @returns its id, or null when it existed. */
  async insertRow(db: Queryable, projectId: string, key: EnvironmentRowKey): Promise<string | null> {
    const [created] = (await db.query(
      `INSERT INTO environment_rows (project_id, kind, name, scope, pull_request, build, commit, first_seen, last_seen)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now())
       ON CONFLICT ON CONSTRAINT environment_rows_name_unique DO NOTHING
       RETURNING id`,
      [projectId, key.kind, key.name, key.scope, key.pullRequest, key.build, key.commit],
    )) as Array<{ id: string }>;
    return created?.id ?? null;
  }

  /** The newest row (by first evidence) of a kind first seen after `since`, or null. */
  async newestRowSince(
    db: Queryable,
    projectId: string,
    kind: MatrixKind,
    since: Date,
  ): Promise<EnvironmentRow | null> {
    const [row] = (await db.query(
      `SELECT ${ROW_COLUMNS} FROM environment_rows WHERE project_id = $1 AND kind = $2 AND first_seen > $3
        ORDER BY first_seen DESC, id DESC LIMIT 1`,
      [projectId, kind, since],
    )) as EnvironmentRow[];
    return row ?? null;
  }

  /** The id of a project's row of this kind and name, or null. */
  async rowId(db: Queryable, projectId: string, kind: MatrixKind, name: string): Promise<string | null> {
    const [existing] = (await db.query(
      'SELECT id FROM environment_rows WHERE project_id = $1 AND kind = $2 AND name = $3',
      [projectId, kind, name],
    )) as Array<{ id: string }>;
    return existing?.id ?? null;
  }

  /**
   * The paths `pattern` (a LIKE pattern) matches, other than `except`, that the exchanges of rows
   * `rowIds` (every row of the project when null) are kept under, each once, in no order.
   */
  async pathsLike(
    db: Queryable,
    projectId: string,
    rowIds: readonly string[] | null,
    pattern: string,
    except: string,
  ): Promise<string[]> {
    const rows = (await db.query(
      `SELECT DISTINCT path FROM evidence_observations
        WHERE project_id = $1 AND ($2::uuid[] IS NULL OR row_id = ANY($2::uuid[])) AND path LIKE $3 AND path <> $4`,
      [projectId, rowIds, pattern, except],
    )) as Array<{ path: string }>;
    return rows.map((row) => row.path);
  }

  /**
   * Row `id`, locked until the transaction ends when no other transaction holds it; `'busy'` when
   * one does (it is not waited for), null when there is no such row.
   */
  async lockRowIfFree(db: Queryable, id: string): Promise<EnvironmentRow | 'busy' | null> {
    const [row] = await queryPrepared<EnvironmentRow>(
      db,
      'spectator_fold_lock_row',
      `SELECT ${ROW_COLUMNS} FROM environment_rows WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED`,
      [id],
    );
    if (row !== undefined) return row;
    const [exists] = (await db.query('SELECT 1 FROM environment_rows WHERE id = $1', [id])) as unknown[];
    return exists === undefined ? null : 'busy';
  }

  /** Touches a locked row with folded batches: last seen the latest, build and commit the latest batch's named. */
  async touchRow(
    db: Queryable,
    id: string,
    lastSeen: string,
    build: string | null,
    commit: string | null,
  ): Promise<EnvironmentRow> {
    const [row] = await queryPrepared<EnvironmentRow>(
      db,
      'spectator_fold_touch_row',
      `WITH touched AS (
         UPDATE environment_rows AS r SET last_seen = greatest(r.last_seen, $2::timestamptz),
                build = coalesce($3, r.build), commit = coalesce($4, r.commit)
          WHERE id = $1 RETURNING r.*)
       SELECT ${ROW_COLUMNS} FROM touched`,
      [id, lastSeen, build, commit],
    );
    if (!row) throw new Error(`environment row ${id} is gone`);
    return row;
  }

  // ---- queued batches (evidence_queue)

  /** Whether any of row `rowId`'s batches up to `upTo` (an id) is still queued (not folded yet). */
  async queuedUpTo(projectId: string, rowId: string, upTo: string): Promise<boolean> {
    const [row] = (await this.db.query(
      `SELECT EXISTS (SELECT 1 FROM evidence_queue WHERE project_id = $1 AND row_id = $2 AND id <= $3::bigint) AS queued`,
      [projectId, rowId, upTo],
    )) as Array<{ queued: boolean }>;
    return row?.queued ?? false;
  }

  /** The id of row `rowId`'s last queued batch (a bigint's text), null when none is queued. */
  async lastQueued(projectId: string, rowId: string): Promise<string | null> {
    const [row] = (await this.db.query(
      'SELECT max(id)::text AS id FROM evidence_queue WHERE project_id = $1 AND row_id = $2',
      [projectId, rowId],
    )) as Array<{ id: string | null }>;
    return row?.id ?? null;
  }

  /**
   * Takes (deletes, in the caller's transaction) a row's queued batches, oldest first, at most
   * `limit` of them and no more once their stored payloads (`pg_column_size`) reach `bytes` (one at
   * least); batches another transaction holds (a regrouping rewriting them) are left for later.
   * @returns the batches, and whether a bound left some queued.
   */
  async takeQueued(
    db: Queryable,
    projectId: string,
    rowId: string,
    limit: number,
    bytes: number,
  ): Promise<{ batches: QueuedBatch[]; left: boolean }> {
    const rows = await queryPrepared<{
      build: string | null;
      commit: string | null;
      lastSeen: Date;
      exchanges: string;
      minutes: string;
      consumers: string;
      candidates: number;
    }>(
      db,
      'spectator_fold_take',
      `WITH candidates AS (
         SELECT id, pg_column_size(packed_exchanges) + pg_column_size(packed_minutes) + pg_column_size(packed_consumers) AS size
           FROM evidence_queue WHERE row_id = $2 ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED
       ), bounded AS (
         SELECT id FROM (SELECT id, sum(size) OVER (ORDER BY id) - size AS before FROM candidates) c WHERE before < $4
       ), taken AS (
         DELETE FROM evidence_queue q
          WHERE q.project_id = $1 AND q.id IN (SELECT id FROM bounded)
         RETURNING q.id, q.build, q.commit, q.last_seen AS "lastSeen", q.packed_exchanges AS exchanges,
                   q.packed_minutes AS minutes, q.packed_consumers AS consumers)
       SELECT t.*, (SELECT count(*) FROM candidates)::int AS candidates FROM taken t ORDER BY t.id`,
      [projectId, rowId, limit, bytes],
    );
    const candidates = rows[0]?.candidates ?? 0;
    return {
      batches: rows.map(
        ({ build, commit, lastSeen, exchanges, minutes, consumers }) =>
          new TakenBatch(build, commit, new Date(lastSeen).toISOString(), { exchanges, minutes, consumers }),
      ),
      left: candidates === limit || rows.length < candidates,
    };
  }

  /** Rows with batches queued for more than `seconds`, with their project (at most `limit`). */
  queuedRows(seconds: number, limit: number): Promise<Array<{ projectId: string; slug: string; rowId: string }>> {
    return this.db.query(
      `SELECT DISTINCT q.project_id AS "projectId", p.slug, q.row_id AS "rowId"
         FROM evidence_queue q JOIN projects p ON p.id = q.project_id
        WHERE q.queued_at < now() - make_interval(secs => $1)
        LIMIT $2`,
      [seconds, limit],
    );
  }

  /**
   * Regrouping: the queued batches of rows `rowIds` (every row of the project when null) name the
   * `literals` paths as `template`, exchanges, runtime minutes and consumer days alike (a fold
   * merges what then shares a key).
   */
  async renameQueuedPaths(
    db: Queryable,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<void> {
    // Stored as JSON text (written and read once, whole): rewritten as jsonb. Each list is a table
    // (queued-payload.ts): its first element the field names, then items with the path second.
    const renamed = (column: string): string =>
      `coalesce((SELECT jsonb_agg(CASE WHEN n > 1 AND x->>1 = ANY($3::text[]) THEN jsonb_set(x, '{1}', to_jsonb($4::text)) ELSE x END ORDER BY n)
                   FROM jsonb_array_elements(q.${column}::jsonb) WITH ORDINALITY AS e(x, n)), '[]'::jsonb)::text`;
    await db.query(
      `UPDATE evidence_queue q SET packed_exchanges = ${renamed('packed_exchanges')}, packed_minutes = ${renamed('packed_minutes')},
              packed_consumers = ${renamed('packed_consumers')}
        WHERE q.project_id = $1 AND ($2::uuid[] IS NULL OR q.row_id = ANY($2::uuid[]))`,
      [projectId, rowIds, literals, template],
    );
  }

  /** The rows `ids`, locked until the transaction ends, in id order. */
  lockRows(db: Queryable, ids: readonly string[]): Promise<EnvironmentRow[]> {
    return db.query(
      `SELECT ${ROW_COLUMNS} FROM environment_rows WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [ids],
    );
  }

  /** Every row of a project, locked until the transaction ends, in id order. */
  lockProjectRows(db: Queryable, projectId: string): Promise<EnvironmentRow[]> {
    return db.query(`SELECT ${ROW_COLUMNS} FROM environment_rows WHERE project_id = $1 ORDER BY id FOR NO KEY UPDATE`, [
      projectId,
    ]);
  }

  /**
   * Records that traffic of an environment kind reached these endpoints (once per project, kind
   * and endpoint; in one key order, so concurrent batches cannot deadlock).
   * @returns those recorded now: reached there for the first time.
   */
  firstSightings(
    db: Queryable,
    projectId: string,
    kind: MatrixKind,
    endpoints: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<Array<{ method: string; path: string }>> {
    return db.query(
      `INSERT INTO endpoint_sightings (project_id, kind, method, path)
       SELECT $1::uuid, $2, e.method, e.path FROM jsonb_to_recordset($3::jsonb) AS e(method text, path text)
        ORDER BY e.method, e.path
       ON CONFLICT DO NOTHING
       RETURNING method, path`,
      [projectId, kind, JSON.stringify(endpoints)],
    );
  }

  // ---- distinct exchanges

  /**
   * Adds exchanges to a row's evidence: counts added, last seen the latest, name lists united; an
   * exchange new to the row keeps its batch's commit and build, and the row's kind and first
   * evidence (what `firstRowsShowing` orders by). In one key order, so concurrent batches cannot
   * deadlock on the stored exchanges; no row lock needed. Nothing another row's fold writes.
   */
  async addExchanges(
    db: Queryable,
    projectId: string,
    rowId: string,
    exchanges: readonly FoldedExchangeRow[],
  ): Promise<void> {
    await queryPrepared(
      db,
      'spectator_fold_add_exchanges',
      `INSERT INTO evidence_observations AS o (row_id, project_id, kind, row_first_seen, method, path, status, request_content_type,
                                                request_shape, response_content_type, response_shape, count, last_seen, query,
                                                request_headers, first_commit, first_build)
       SELECT $1::uuid, $2::uuid, e.kind, e.first_seen, r.method, r.path, r.status, r.req_ct, r.req_fp, r.res_ct, r.res_fp, r.count,
              r.last_seen, r.query, r.req_h, r.commit, r.build
         FROM environment_rows e CROSS JOIN jsonb_to_recordset($3::jsonb) AS r(method text, path text, status smallint, req_ct text, req_fp text, res_ct text, res_fp text,
                                                 count bigint, last_seen timestamptz, query text[], req_h text[], commit text, build text)
        WHERE e.id = $1 AND e.project_id = $2
        ORDER BY r.method, r.path, r.status, coalesce(r.req_ct, ' '), coalesce(r.req_fp, ' '), coalesce(r.res_ct, ' '), coalesce(r.res_fp, ' ')
       ON CONFLICT ${OBSERVATION_KEY}
       DO UPDATE SET ${ADD_TO_OBSERVATION}`,
      [rowId, projectId, JSON.stringify(exchanges)],
    );
  }

  /**
   * Moves the exchanges some rows (`rowIds`, or every row of the project when null) keep under the
   * `literals` paths to `template`, folded by exchange key (counts added, last seen the latest, name
   * lists united). Nothing is left under the literals.
   * @returns per row that had any, how many stored exchanges were moved (before folding), by row id.
   */
  moveExchanges(
    db: Queryable,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<Array<{ rowId: string; moved: number }>> {
    return db.query(
      `WITH moved AS (
         DELETE FROM evidence_observations o
          WHERE o.project_id = $1 AND ($2::uuid[] IS NULL OR o.row_id = ANY($2::uuid[])) AND o.path = ANY($3::text[])
         RETURNING o.*
       ), folded AS (
         SELECT m.row_id, m.kind, m.row_first_seen, m.method, m.status, m.request_content_type, m.request_shape, m.response_content_type, m.response_shape,
                sum(m.count) AS count, min(m.first_seen) AS first_seen, max(m.last_seen) AS last_seen,
                (array_agg(m.first_commit ORDER BY m.first_seen))[1] AS first_commit,
                (array_agg(m.first_build ORDER BY m.first_seen))[1] AS first_build,
                ${foldedNames('query')} AS query, ${foldedNames('request_headers')} AS request_headers, count(*) AS rows
           FROM moved m
          GROUP BY m.row_id, m.kind, m.row_first_seen, m.method, m.status, m.request_content_type, m.request_shape, m.response_content_type, m.response_shape
       ), merged AS (
         INSERT INTO evidence_observations AS o (row_id, project_id, kind, row_first_seen, method, path, status, request_content_type,
                                                  request_shape, response_content_type, response_shape, count, first_seen, last_seen, query,
                                                  request_headers, first_commit, first_build)
         SELECT f.row_id, $1::uuid, f.kind, f.row_first_seen, f.method, $4, f.status, f.request_content_type, f.request_shape, f.response_content_type, f.response_shape,
                f.count, f.first_seen, f.last_seen, f.query, f.request_headers, f.first_commit, f.first_build
           FROM folded f
          ORDER BY f.row_id, f.method, f.status, coalesce(f.request_content_type, ' '), coalesce(f.request_shape, ' '),
                   coalesce(f.response_content_type, ' '), coalesce(f.response_shape, ' ')
         ON CONFLICT ${OBSERVATION_KEY}
         DO UPDATE SET ${ADD_TO_OBSERVATION}, first_seen = least(o.first_seen, EXCLUDED.first_seen),
                       first_commit = CASE WHEN EXCLUDED.first_seen < o.first_seen THEN EXCLUDED.first_commit ELSE o.first_commit END,
                       first_build = CASE WHEN EXCLUDED.first_seen < o.first_seen THEN EXCLUDED.first_build ELSE o.first_build END
       )
       SELECT row_id AS "rowId", sum(rows)::int AS moved FROM folded GROUP BY row_id ORDER BY row_id`,
      [projectId, rowIds, literals, template],
    );
  }

  /** A row's stored exchanges of some endpoints (by method and path), with their counts and last seen. */
  exchangesOf(db: Queryable, rowId: string, endpoints: readonly EndpointRef[]): Promise<StoredExchange[]> {
    // Not prepared: a generic plan cannot know the row's share of the table (on an empty table it
    // joined every stored exchange by hash, where a custom plan probes the row's by index).
    return db.query(
      `SELECT ${OBSERVATION_COLUMNS}, o.count::float8 AS count, o.last_seen AS "lastSeen",
              o.first_commit AS "firstCommit", o.first_build AS "firstBuild"
         FROM evidence_observations o
         JOIN jsonb_to_recordset($2::jsonb) AS t(method text, path text) ON o.method = t.method AND o.path = t.path
        WHERE o.row_id = $1`,
      [rowId, JSON.stringify(endpoints.map(({ method, path }) => ({ method, path })))],
    );
  }

  /**
   * What row `rowId` shows of the removal of `endpoints` (by method and path): the calls of all its
   * evidence, and those of the endpoints answered with a status not in `goneStatuses`, per status.
   */
  async removalEvidence(
    db: Queryable,
    rowId: string,
    endpoints: ReadonlyArray<{ method: string; path: string }>,
    goneStatuses: readonly number[],
  ): Promise<RemovalEvidence> {
    const [row] = (await db.query(
      `SELECT (SELECT coalesce(sum(count), 0)::float8 FROM evidence_observations WHERE row_id = $1) AS calls,
              coalesce((SELECT jsonb_agg(jsonb_build_object('status', s.status, 'calls', s.calls) ORDER BY s.calls DESC, s.status)
                          FROM (SELECT o.status, sum(o.count)::float8 AS calls FROM evidence_observations o
                                  JOIN jsonb_to_recordset($2::jsonb) AS t(method text, path text) ON o.method = t.method AND o.path = t.path
                                 WHERE o.row_id = $1 AND NOT (o.status = ANY($3::int[]))
                                 GROUP BY o.status) s), '[]'::jsonb) AS served`,
      [rowId, JSON.stringify(endpoints.map(({ method, path }) => ({ method, path }))), goneStatuses],
    )) as RemovalEvidence[];
    return { calls: Number(row?.calls ?? 0), served: row?.served ?? [] };
  }

  // ---- cells

  /**
   * The (row, endpoint) pairs of a project's endpoints `endpoints` whose cell shows no version
   * (drifting, or never computed) while the row has evidence of the endpoint, at most `limit` rows
   * per endpoint.
   */
  stalePairs(
    db: Queryable,
    projectId: string,
    endpoints: readonly EndpointRef[],
    limit: number,
  ): Promise<Array<{ rowId: string; endpointId: string }>> {
    return db.query(
      `SELECT e.id AS "endpointId", stale."rowId"
         FROM jsonb_to_recordset($1::jsonb) AS e(id uuid, method text, path text)
         CROSS JOIN LATERAL (
           SELECT DISTINCT eo.row_id AS "rowId" FROM evidence_observations eo
            WHERE eo.project_id = $2 AND eo.method = e.method AND eo.path = e.path
              AND NOT EXISTS (SELECT 1 FROM evidence_cells c WHERE c.row_id = eo.row_id AND c.endpoint_id = e.id AND c.version_id IS NOT NULL)
            LIMIT $3) stale`,
      [JSON.stringify(endpoints.map(({ id, method, path }) => ({ id, method, path }))), projectId, limit],
    );
  }

  /** A row's cells of some endpoints (those it has). */
  cellsOf(db: Queryable, rowId: string, endpointIds: readonly string[]): Promise<EndpointCell[]> {
    return queryPrepared<EndpointCell>(
      db,
      'spectator_fold_cells_of',
      `SELECT endpoint_id AS "endpointId", version_id AS "versionId", version, drift FROM evidence_cells WHERE row_id = $1 AND endpoint_id = ANY($2::uuid[])`,
      [rowId, textArrayLiteral(endpointIds)],
    );
  }

  /** Moves the last seen of a row's cells of some endpoints to the evidence's newest (never back), the values left as they are. */
  async touchCells(
    db: Queryable,
    rowId: string,
    seen: ReadonlyArray<{ endpointId: string; lastSeen: string }>,
  ): Promise<void> {
    if (seen.length === 0) return;
    // Not prepared, as exchangesOf: a generic plan cannot know the row's share of the table.
    await db.query(
      `UPDATE evidence_cells c SET last_seen = greatest(c.last_seen, x."lastSeen")
         FROM jsonb_to_recordset($2::jsonb) AS x("endpointId" uuid, "lastSeen" timestamptz)
        WHERE c.row_id = $1 AND c.endpoint_id = x."endpointId" AND c.last_seen < x."lastSeen"`,
      [rowId, JSON.stringify(seen)],
    );
  }

  /** Writes a row's cells (in endpoint order); a cell's last seen never moves back. */
  async writeCells(db: Queryable, rowId: string, cells: readonly NewCell[]): Promise<void> {
    await queryPrepared(
      db,
      'spectator_fold_write_cells',
      `INSERT INTO evidence_cells AS c (project_id, row_id, endpoint_id, version_id, version, drift, last_seen)
       SELECT r.project_id, r.id, x."endpointId", x."versionId", x.version, x.drift, x."lastSeen"
         FROM environment_rows r,
              jsonb_to_recordset($2::jsonb) AS x("endpointId" uuid, "versionId" uuid, version text, drift boolean, "lastSeen" timestamptz)
        WHERE r.id = $1::uuid
        ORDER BY x."endpointId"
       ON CONFLICT (row_id, endpoint_id, project_id) DO UPDATE
         SET version_id = EXCLUDED.version_id, version = EXCLUDED.version, drift = EXCLUDED.drift, last_seen = greatest(c.last_seen, EXCLUDED.last_seen)`,
      [rowId, JSON.stringify(cells)],
    );
  }

  // ---- what runs there now

  /**
   * "What runs there now" in a row's kind and scope for the endpoints `endpointIds`, and for the
   * endpoints `ownedIds` where it is the row's, locked until the transaction ends, in endpoint order.
   */
  lockCurrent(
    db: Queryable,
    projectId: string,
    row: EnvironmentRow,
    endpointIds: readonly string[],
    ownedIds: readonly string[] = [],
  ): Promise<CurrentCell[]> {
    return queryPrepared<CurrentCell>(
      db,
      'spectator_fold_lock_current',
      `SELECT endpoint_id AS "endpointId", row_id AS "rowId", row_first_seen AS "rowFirstSeen", version, drift FROM evidence_current
        WHERE project_id = $1 AND kind = $2 AND scope = $3
          AND (endpoint_id = ANY($4::uuid[]) OR (row_id = $5 AND endpoint_id = ANY($6::uuid[])))
        ORDER BY endpoint_id FOR UPDATE`,
      [projectId, row.kind, row.scope, textArrayLiteral(endpointIds), row.id, textArrayLiteral(ownedIds)],
    );
  }

  /**
   * Moves the last seen of "what runs there now" of some endpoints where it is `row`'s to
   * the evidence's newest (never back); the caller has locked them (`lockCurrent`).
   */
  async touchCurrent(
    db: Queryable,
    projectId: string,
    row: EnvironmentRow,
    seen: ReadonlyArray<{ endpointId: string; lastSeen: string }>,
  ): Promise<void> {
    if (seen.length === 0) return;
    await queryPrepared(
      db,
      'spectator_fold_touch_current',
      `UPDATE evidence_current c SET last_seen = x."lastSeen"
         FROM jsonb_to_recordset($5::jsonb) AS x("endpointId" uuid, "lastSeen" timestamptz)
        WHERE c.project_id = $1 AND c.kind = $2 AND c.scope = $3 AND c.endpoint_id = x."endpointId"
          AND c.row_id = $4 AND c.last_seen < x."lastSeen"`,
      [projectId, row.kind, row.scope, row.id, JSON.stringify(seen)],
    );
  }

  /** Makes `row`'s cells what runs now in its kind and scope (in endpoint order). */
  async writeCurrent(db: Queryable, projectId: string, row: EnvironmentRow, cells: readonly NewCell[]): Promise<void> {
    await queryPrepared(
      db,
      'spectator_fold_write_current',
      `INSERT INTO evidence_current AS c (project_id, kind, scope, endpoint_id, row_id, row_first_seen, version_id, version, drift, last_seen)
       SELECT $1::uuid, $2, $3, x."endpointId", $4::uuid, $5::timestamptz, x."versionId", x.version, x.drift, x."lastSeen"
         FROM jsonb_to_recordset($6::jsonb) AS x("endpointId" uuid, "versionId" uuid, version text, drift boolean, "lastSeen" timestamptz)
        ORDER BY x."endpointId"
       ON CONFLICT (project_id, kind, scope, endpoint_id) DO UPDATE
         SET row_id = EXCLUDED.row_id, row_first_seen = EXCLUDED.row_first_seen, version_id = EXCLUDED.version_id,
             version = EXCLUDED.version, drift = EXCLUDED.drift, last_seen = EXCLUDED.last_seen`,
      [projectId, row.kind, row.scope, row.id, row.firstSeen, JSON.stringify(cells)],
    );
  }

  // ---- reads of the matrix and of what runs where

  /** The kind of a project's row `id`, or null when the project has no such row. */
  async rowKind(db: Queryable, projectId: string, id: string): Promise<{ kind: MatrixKind; id: string } | null> {
    const [row] = (await db.query('SELECT kind, id FROM environment_rows WHERE id = $1 AND project_id = $2', [
      id,
      projectId,
    ])) as Array<{ kind: MatrixKind; id: string }>;
    return row ?? null;
  }

  /**
   * Up to `limit` rows of a kind, newest first (by first evidence, then id), after row `after`
   * when given (a row of that kind), with their stored matrix texts.
   */
  matrixRows(
    db: Queryable,
    projectId: string,
    kind: MatrixKind,
    limit: number,
    after: string | null,
  ): Promise<StoredMatrixRow[]> {
    return db.query(
      `SELECT r.id, r.kind, r.name, r.build, r.pull_request AS "pullRequest", r.commit, r.last_seen AS "lastSeen",
              r.cells_json AS "cellsJson", r.cells_columns AS "cellsColumns"
         FROM environment_rows r
        WHERE r.project_id = $1 AND r.kind = $2
          ${after !== null ? 'AND (r.first_seen, r.id) < (SELECT first_seen, id FROM environment_rows WHERE id = $4)' : ''}
        ORDER BY r.first_seen DESC, r.id DESC
        LIMIT $3`,
      after !== null ? [projectId, kind, limit, after] : [projectId, kind, limit],
    );
  }

  /**
   * What runs now, per endpoint of `endpoints` (in their order), in one scope of a kind of a
   * project, or with `scope` null in the newest row (by first evidence) of any scope of it.
   */
  currentVersions(
    projectId: string,
    endpoints: readonly EndpointRef[],
    kind: MatrixKind,
    scope: string | null,
  ): Promise<CurrentVersion[]> {
    return this.db.query(
      `SELECT e.id AS "endpointId", e.method, e.path, cur.version_id AS "versionId", cur.version, cur.drift, r.name AS row,
              r.pull_request AS "pullRequest", r.build, r.commit, cur.last_seen AS "lastSeen"
         FROM unnest($2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS e(id, method, path, position)
         ${
           scope !== null
             ? 'LEFT JOIN evidence_current cur ON cur.project_id = $1 AND cur.kind = $5 AND cur.scope = $6 AND cur.endpoint_id = e.id'
             : `LEFT JOIN LATERAL (
                  SELECT c.* FROM evidence_current c
                   WHERE c.project_id = $1 AND c.kind = $5 AND c.endpoint_id = e.id
                   ORDER BY c.row_first_seen DESC LIMIT 1) cur ON true`
         }
         LEFT JOIN environment_rows r ON r.id = cur.row_id
        ORDER BY e.position`,
      [
        projectId,
        endpoints.map((e) => e.id),
        endpoints.map((e) => e.method),
        endpoints.map((e) => e.path),
        kind,
        ...(scope !== null ? [scope] : []),
      ],
    );
  }

  // ---- where the traffic of diffs was first seen (evidence/diff-origins.service.ts)

  /**
   * Per group `n` of exchanges (by method, path, status, content types and shape fingerprints),
   * the first row of each kind whose evidence has one of them: the one that had it first (then by
   * the row's first evidence, then id), when, and the commit and build of the batch that brought it
   * (the row's, newest, for evidence kept before they were). One probe of
   * `evidence_observations_origin_idx` per exchange and kind, however many rows have it.
   */
  firstRowsShowing(projectId: string, wanted: readonly WantedExchange[]): Promise<RowShowing[]> {
    if (wanted.length === 0) return Promise.resolve([]);
    return this.db.query(
      `SELECT DISTINCT ON (w.n, k.kind) w.n, k.kind, r.name, r.pull_request AS "pullRequest",
              coalesce(x.build, r.build) AS build, coalesce(x.commit, r.commit) AS commit, x.first_seen AS "firstSeen"
         FROM jsonb_to_recordset($2::jsonb)
              AS w(n int, method text, path text, status smallint, req_ct text, req_fp text, res_ct text, res_fp text)
        CROSS JOIN unnest($3::text[]) AS k(kind)
        CROSS JOIN ${FIRST_ROW_OF}
         JOIN environment_rows r ON r.id = x.row_id AND r.project_id = $1
        ORDER BY w.n, k.kind, x.first_seen, x.row_first_seen, x.row_id`,
      [projectId, JSON.stringify(wanted), [...MATRIX_KINDS]],
    );
  }
}
