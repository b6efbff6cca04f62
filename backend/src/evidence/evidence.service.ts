import { Injectable } from '@nestjs/common';
import { type AgentEnvironment, type EndpointShapes, isDocumentableHeader, type Shape } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import { ConformanceCache } from '../captures/conformance';
import { type ObservationRow, ROW_COLUMNS as OBSERVATION_COLUMNS } from '../captures/observed-shapes';
import { LruCache } from '../common/lru-cache';
import { matrixTexts } from '../views/matrix-texts';
import { type EventProject, Notifier } from '../webhooks/notifier';
import { type CandidateVersion, type CellValue, evaluateCell } from './cell';
import { environmentRowOf, type EnvironmentRowKey } from './environment-row';

/** One aggregated exchange of an ingest batch (the fields of the ingest service's aggregated rows). */
export interface BatchExchange {
  method: string;
  path: string;
  status: number;
  req_ct: string | null;
  req_fp: string | null;
  res_ct: string | null;
  res_fp: string | null;
  count: number;
  last_seen: string;
  /** Query parameter and request header names (absent: not known, then parameters are not compared). */
  query?: string[];
  req_h?: string[];
}

/**
 * The union of a stored name list and a batch's (sorted), as observations keep them; an unknown
 * (null) side leaves the other as it is.
 */
function unionOfNames(column: string): string {
  return `${column} = CASE WHEN EXCLUDED.${column} IS NULL OR EXCLUDED.${column} <@ o.${column} THEN o.${column} WHEN o.${column} IS NULL THEN EXCLUDED.${column}
                     ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.${column} || EXCLUDED.${column}) x ORDER BY x) END`;
}

/** What evidence keeps of an exchange: its key, count, last seen, and only the header names worth documenting. */
function evidenceOf(
  exchange: BatchExchange,
): Omit<BatchExchange, 'query' | 'req_h'> & { query: string[] | null; req_h: string[] | null } {
  const { method, path, status, req_ct, req_fp, res_ct, res_fp, count, last_seen, query, req_h } = exchange;
  return {
    method,
    path,
    status,
    req_ct,
    req_fp,
    res_ct,
    res_fp,
    count,
    last_seen,
    query: query ?? null,
    req_h: req_h?.filter(isDocumentableHeader) ?? null,
  };
}

/** An environment row as stored. */
export interface EnvironmentRow extends EnvironmentRowKey {
  id: string;
  firstSeen: Date;
}

/** Environment rows whose cells changed in a transaction, each with the endpoints whose cells changed. */
export type CellChanges = ReadonlyArray<{ row: EnvironmentRow; endpointIds: readonly string[] }>;

/**
 * Told in the transaction which cells changed (after their text is rebuilt): the proposals'
 * lifecycle records the evidence steps they reach (proposals/proposal-lifecycle.ts).
 */
export type CellsChangedListener = (
  manager: EntityManager,
  project: EventProject,
  changes: CellChanges,
) => Promise<void>;

interface EndpointRef {
  id: string;
  method: string;
  path: string;
}

type EvidenceExchange = ObservationRow & { lastSeen: Date };

/** How many rows at most are recomputed for one endpoint when a version of it is made. */
export const RECOMPUTE_ROW_LIMIT = 2_000;

const ROW_COLUMNS = `id, kind, name, scope, pull_request AS "pullRequest", build, commit, first_seen AS "firstSeen"`;

/**
 * The precomputed evidence: per environment row, the distinct exchanges it observed per method +
 * path, and per (row, documented endpoint) the version the row shows, kept up to date inside the
 * transactions that change its inputs (an ingest batch, a new version). Transitions it finds (the
 * version running somewhere changed, a proposal reached a step) are emitted in the same transaction.
 *
 * Concurrency: every writer of a row's cells (and of its matrix text, views/matrix-texts.ts) first locks
 * that environment row (the upsert in `recordBatch`, `FOR UPDATE` in `versionsMade`), so two
 * writers never compute a cell from different snapshots; locks are taken in one order (endpoints, environment rows by id, proposals
 * by id) so writers cannot deadlock.
 */
@Injectable()
export class EvidenceService {
  /** Conformance of one distinct exchange to one version: both are immutable, so this never goes stale. */
  private readonly conformance = new ConformanceCache();
  private readonly versionShapes = new LruCache<string, EndpointShapes>(20_000);
  private readonly shapes = new LruCache<string, Shape>(50_000);
  /** Environment row ids by project, kind and name. */
  private readonly rowIds = new LruCache<string, string>(10_000);

  private readonly cellsChangedListeners: CellsChangedListener[] = [];

  constructor(private readonly notifier: Notifier) {}

  /** Calls `listener` in every transaction that changes cells (ProposalLifecycle adds itself). */
  onCellsChanged(listener: CellsChangedListener): void {
    this.cellsChangedListeners.push(listener);
  }

  private async cellsChanged(manager: EntityManager, project: EventProject, changes: CellChanges): Promise<void> {
    for (const listener of this.cellsChangedListeners) await listener(manager, project, changes);
  }

  /**
   * The ingest hook, called in the batch's transaction: records the batch's exchanges for its
   * environment row and refreshes that row's cells of the documented endpoints it touched.
   * `local` captures are not evidence and are skipped.
   *
   * The row's lock is taken after the exchanges are recorded, so agents of one build do not queue
   * behind each other's evidence insert: that insert needs no row lock (it adds counts, in one key
   * order so concurrent batches cannot deadlock on the observations), only computing cells does,
   * and everything that computes them is read after the lock.
   *
   * Each exchange's query parameter and documentable request header names are kept too (a union
   * per stored row, like observations), so a version that documents parameters is evidenced only
   * by traffic that sends what it documents.
   */
  async recordBatch(
    manager: EntityManager,
    project: EventProject,
    environment: AgentEnvironment,
    exchanges: readonly BatchExchange[],
  ): Promise<void> {
    const key = environmentRowOf(environment);
    if (key === null || exchanges.length === 0) return;
    const lastSeen = exchanges.reduce(
      (latest, e) => (Date.parse(e.last_seen) > Date.parse(latest) ? e.last_seen : latest),
      exchanges[0]?.last_seen as string,
    );
    await manager.query(
      `INSERT INTO evidence_observations AS o (row_id, project_id, method, path, status, request_content_type, request_shape,
                                                response_content_type, response_shape, count, last_seen, query, request_headers)
       SELECT $1::uuid, $2::uuid, r.method, r.path, r.status, r.req_ct, r.req_fp, r.res_ct, r.res_fp, r.count, r.last_seen, r.query, r.req_h
         FROM jsonb_to_recordset($3::jsonb) AS r(method text, path text, status smallint, req_ct text, req_fp text, res_ct text, res_fp text,
                                                 count bigint, last_seen timestamptz, query text[], req_h text[])
        ORDER BY r.method, r.path, r.status, coalesce(r.req_ct, ' '), coalesce(r.req_fp, ' '), coalesce(r.res_ct, ' '), coalesce(r.res_fp, ' ')
       ON CONFLICT (row_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                    (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')))
       DO UPDATE SET count = o.count + EXCLUDED.count, last_seen = greatest(o.last_seen, EXCLUDED.last_seen),
                     ${unionOfNames('query')}, ${unionOfNames('request_headers')}`,
      [await this.rowIdOf(manager, project.id, key), project.id, JSON.stringify(exchanges.map(evidenceOf))],
    );
    const row = await this.upsertRow(manager, project.id, key, lastSeen);
    const touched = [
      ...new Map(exchanges.map((e) => [`${e.method} ${e.path}`, { method: e.method, path: e.path }])).values(),
    ];
    const endpoints: EndpointRef[] = await manager.query(
      `SELECT e.id, e.method, e.path FROM endpoints e
         JOIN jsonb_to_recordset($2::jsonb) AS t(method text, path text) ON e.method = t.method AND e.path = t.path
        WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
        ORDER BY e.id`,
      [project.id, JSON.stringify(touched)],
    );
    if (endpoints.length === 0) return;
    const changed = await this.refreshCells(manager, project, row, endpoints);
    // The matrix text shows versions and drift only: a batch that changed no cell leaves it as is.
    if (changed.length > 0) await matrixTexts.rebuild(manager, project.id, [row.id]);
    await this.cellsChanged(manager, project, [{ row, endpointIds: changed }]);
  }

  /**
   * Regrouping (paths/regroup.service.ts), in its transaction: moves the evidence some
   * environment rows (`rowIds`, or every row of the project when null) keep under the `literals`
   * paths to `template`, folded by exchange key (counts added, last seen the latest, name lists
   * united; an unknown list leaves the other as it is, as in `recordBatch`), and refreshes those
   * rows' cells of the endpoints documented at `template`. Nothing is left under the literals.
   * @returns how many evidence rows were moved (before folding).
   */
  async regroup(
    manager: EntityManager,
    project: EventProject,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    if (literals.length === 0) return 0;
    // The name lists are united with jsonpath: an aggregate of arrays of different lengths cannot be built directly.
    const names = (column: string): string =>
      `CASE WHEN bool_and(m.${column} IS NULL) THEN NULL
            ELSE (SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') FROM jsonb_array_elements_text(jsonb_path_query_array(jsonb_agg(to_jsonb(m.${column})), '$[*][*]')) x WHERE x IS NOT NULL) END`;
    const moved: Array<{ rowId: string; moved: number }> = await manager.query(
      `WITH moved AS (
         DELETE FROM evidence_observations o
          WHERE o.project_id = $1 AND ($2::uuid[] IS NULL OR o.row_id = ANY($2::uuid[])) AND o.path = ANY($3::text[])
         RETURNING o.*
       ), folded AS (
         SELECT m.row_id, m.method, m.status, m.request_content_type, m.request_shape, m.response_content_type, m.response_shape,
                sum(m.count) AS count, max(m.last_seen) AS last_seen, ${names('query')} AS query, ${names('request_headers')} AS request_headers,
                count(*) AS rows
           FROM moved m
          GROUP BY m.row_id, m.method, m.status, m.request_content_type, m.request_shape, m.response_content_type, m.response_shape
       ), merged AS (
         INSERT INTO evidence_observations AS o (row_id, project_id, method, path, status, request_content_type, request_shape,
                                                  response_content_type, response_shape, count, last_seen, query, request_headers)
         SELECT f.row_id, $1::uuid, f.method, $4, f.status, f.request_content_type, f.request_shape, f.response_content_type, f.response_shape,
                f.count, f.last_seen, f.query, f.request_headers
           FROM folded f
          ORDER BY f.row_id, f.method, f.status, coalesce(f.request_content_type, ' '), coalesce(f.request_shape, ' '),
                   coalesce(f.response_content_type, ' '), coalesce(f.response_shape, ' ')
         ON CONFLICT (row_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                      (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')))
         DO UPDATE SET count = o.count + EXCLUDED.count, last_seen = greatest(o.last_seen, EXCLUDED.last_seen),
                       ${unionOfNames('query')}, ${unionOfNames('request_headers')}
       )
       SELECT row_id AS "rowId", sum(rows)::int AS moved FROM folded GROUP BY row_id ORDER BY row_id`,
      [project.id, rowIds, literals, template],
    );
    if (moved.length === 0) return 0;
    const endpoints: EndpointRef[] = await manager.query(
      'SELECT id, method, path FROM endpoints WHERE project_id = $1 AND path = $2 AND current_version_id IS NOT NULL ORDER BY id',
      [project.id, template],
    );
    if (endpoints.length > 0) {
      // Rows are locked in id order (see the class comment) before their cells are computed.
      const rows: EnvironmentRow[] = await manager.query(
        `SELECT ${ROW_COLUMNS} FROM environment_rows WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
        [moved.map((m) => m.rowId)],
      );
      const changes: Array<{ row: EnvironmentRow; endpointIds: string[] }> = [];
      for (const row of rows)
        changes.push({ row, endpointIds: await this.refreshCells(manager, project, row, endpoints) });
      const rebuilt = changes.filter((change) => change.endpointIds.length > 0).map((change) => change.row.id);
      if (rebuilt.length > 0) await matrixTexts.rebuild(manager, project.id, rebuilt);
      await this.cellsChanged(manager, project, changes);
    }
    return moved.reduce((sum, m) => sum + m.moved, 0);
  }

  /**
   * Called in the transaction that made new versions of some endpoints (a documentation commit or
   * an approval, through ProposalLifecycle.versionsMade): recomputes the cells that can change. A new version is newer than every other, so a cell that already shows a
   * version keeps it (it is the lowest conforming one); only drifting cells and rows that saw the
   * endpoint before it was documented are recomputed (at most RECOMPUTE_ROW_LIMIT rows per endpoint).
   * When an endpoint is documented for the first time the matrix gains a column, so every row of
   * the project is locked and gets an `N/A` spliced into its cells text (rare: once per endpoint).
   */
  async versionsMade(manager: EntityManager, project: EventProject, endpointIds: readonly string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    // First documented now: the version just made is its only one.
    const firstDocumented = (
      (await manager.query(
        `SELECT e.id FROM endpoints e
        WHERE e.id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM endpoint_versions v WHERE v.endpoint_id = e.id AND v.id <> e.current_version_id)`,
        [endpointIds],
      )) as Array<{ id: string }>
    ).map((e) => e.id);
    const columnsGrew = firstDocumented.length > 0;
    const stalePairs = (): Promise<Array<{ rowId: string; endpointId: string }>> =>
      manager.query(
        `SELECT e.id AS "endpointId", stale."rowId"
           FROM endpoints e
           CROSS JOIN LATERAL (
             SELECT DISTINCT eo.row_id AS "rowId" FROM evidence_observations eo
              WHERE eo.project_id = e.project_id AND eo.method = e.method AND eo.path = e.path
                AND NOT EXISTS (SELECT 1 FROM evidence_cells c WHERE c.row_id = eo.row_id AND c.endpoint_id = e.id AND c.version_id IS NOT NULL)
              LIMIT ${RECOMPUTE_ROW_LIMIT}) stale
          WHERE e.id = ANY($1::uuid[]) AND e.project_id = $2`,
        [endpointIds, project.id],
      );
    let rows: EnvironmentRow[];
    let pairs: Array<{ rowId: string; endpointId: string }>;
    if (columnsGrew) {
      // Every row of the project, locked before its evidence is read: a batch that recorded
      // exchanges of the new endpoint and committed while we waited is seen.
      rows = await manager.query(
        `SELECT ${ROW_COLUMNS} FROM environment_rows WHERE project_id = $1 ORDER BY id FOR UPDATE`,
        [project.id],
      );
      pairs = await stalePairs();
    } else {
      pairs = await stalePairs();
      if (pairs.length === 0) return;
      rows = await manager.query(
        `SELECT ${ROW_COLUMNS} FROM environment_rows WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
        [[...new Set(pairs.map((pair) => pair.rowId))]],
      );
    }
    const endpoints: EndpointRef[] = await manager.query(
      'SELECT id, method, path FROM endpoints WHERE id = ANY($1::uuid[]) ORDER BY id',
      [[...new Set(pairs.map((p) => p.endpointId))]],
    );
    const changes: Array<{ row: EnvironmentRow; endpointIds: string[] }> = [];
    for (const row of rows) {
      const wanted = new Set(pairs.filter((pair) => pair.rowId === row.id).map((pair) => pair.endpointId));
      if (wanted.size > 0)
        changes.push({
          row,
          endpointIds: await this.refreshCells(
            manager,
            project,
            row,
            endpoints.filter((e) => wanted.has(e.id)),
          ),
        });
    }
    // Rows whose cells changed get their text rebuilt; the others only gain the new columns.
    const rebuilt = new Set(changes.filter((change) => change.endpointIds.length > 0).map((change) => change.row.id));
    if (columnsGrew) {
      const stale = await matrixTexts.insertNotSeenColumns(
        manager,
        project.id,
        rows.filter((row) => !rebuilt.has(row.id)).map((row) => row.id),
        firstDocumented,
      );
      for (const id of stale) rebuilt.add(id);
    }
    if (rebuilt.size > 0) await matrixTexts.rebuild(manager, project.id, [...rebuilt]);
    await this.cellsChanged(manager, project, changes);
  }

  /**
   * The id of the row, created when new (which locks only a new row). Ids of committed rows are
   * cached: rows are only ever removed with their project, and the key names the project.
   */
  private async rowIdOf(manager: EntityManager, projectId: string, key: EnvironmentRowKey): Promise<string> {
    const cacheKey = `${projectId}\u0000${key.kind}\u0000${key.name}`;
    const cached = this.rowIds.get(cacheKey);
    if (cached !== undefined) return cached;
    const [created] = (await manager.query(
      `INSERT INTO environment_rows (project_id, kind, name, scope, pull_request, build, commit, first_seen, last_seen)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now())
       ON CONFLICT ON CONSTRAINT environment_rows_name_unique DO NOTHING
       RETURNING id`,
      [projectId, key.kind, key.name, key.scope, key.pullRequest, key.build, key.commit],
    )) as Array<{ id: string }>;
    // Not cached: this transaction may still roll back.
    if (created) return created.id;
    const [existing] = (await manager.query(
      'SELECT id FROM environment_rows WHERE project_id = $1 AND kind = $2 AND name = $3',
      [projectId, key.kind, key.name],
    )) as Array<{ id: string }>;
    if (!existing) throw new Error(`environment row ${key.kind} ${key.name} neither inserted nor found`);
    this.rowIds.set(cacheKey, existing.id);
    return existing.id;
  }

  /** Creates or touches the row (taking its lock until the transaction ends) and returns it. */
  private async upsertRow(
    manager: EntityManager,
    projectId: string,
    key: EnvironmentRowKey,
    lastSeen: string,
  ): Promise<EnvironmentRow> {
    const [row] = (await manager.query(
      `INSERT INTO environment_rows AS r (project_id, kind, name, scope, pull_request, build, commit, first_seen, last_seen)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8::timestamptz)
       ON CONFLICT ON CONSTRAINT environment_rows_name_unique DO UPDATE
         SET last_seen = greatest(r.last_seen, EXCLUDED.last_seen),
             commit = coalesce(EXCLUDED.commit, r.commit),
             build = coalesce(EXCLUDED.build, r.build)
       RETURNING ${ROW_COLUMNS}`,
      [projectId, key.kind, key.name, key.scope, key.pullRequest, key.build, key.commit, lastSeen],
    )) as EnvironmentRow[];
    if (!row) throw new Error('environment row upsert returned nothing');
    return row;
  }

  /**
   * Recomputes one row's cells of some endpoints from its evidence, writes them, moves "what runs
   * there now" when this row is the newest of its scope, and emits `version.changed` for every
   * change there. Returns the endpoints whose cell changed.
   */
  private async refreshCells(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    endpoints: readonly EndpointRef[],
  ): Promise<string[]> {
    if (endpoints.length === 0) return [];
    const endpointIds = endpoints.map((e) => e.id);
    // One connection per transaction: these run one after the other.
    const versions: Array<CandidateVersion & { endpointId: string }> = await manager.query(
      `SELECT id, endpoint_id AS "endpointId", major, minor FROM endpoint_versions WHERE endpoint_id = ANY($1::uuid[])`,
      [endpointIds],
    );
    const evidence: EvidenceExchange[] = await manager.query(
      `SELECT ${OBSERVATION_COLUMNS}, o.count::float8 AS count, o.last_seen AS "lastSeen"
         FROM evidence_observations o
         JOIN jsonb_to_recordset($2::jsonb) AS t(method text, path text) ON o.method = t.method AND o.path = t.path
        WHERE o.row_id = $1`,
      [row.id, JSON.stringify(endpoints.map(({ method, path }) => ({ method, path })))],
    );
    const before: Array<CellValue & { endpointId: string }> = await manager.query(
      `SELECT endpoint_id AS "endpointId", version_id AS "versionId", version, drift FROM evidence_cells WHERE row_id = $1 AND endpoint_id = ANY($2::uuid[])`,
      [row.id, endpointIds],
    );
    const shapes = await this.loadShapes(manager, evidence);
    const documented = await this.loadVersionShapes(
      manager,
      versions.map((v) => v.id),
    );
    const conforms = (versionId: string, exchange: EvidenceExchange): boolean =>
      this.conformance.conforms(versionId, documented.get(versionId), exchange, shapes);

    const previous = new Map(before.map((cell) => [cell.endpointId, cell]));
    const cells: Array<CellValue & { endpointId: string; lastSeen: string }> = [];
    for (const endpoint of endpoints) {
      const seen = evidence.filter((e) => e.method === endpoint.method && e.path === endpoint.path);
      const candidates = versions.filter((v) => v.endpointId === endpoint.id);
      if (seen.length === 0 || candidates.length === 0) continue;
      const lastSeen = new Date(Math.max(...seen.map((e) => new Date(e.lastSeen).getTime()))).toISOString();
      cells.push({ endpointId: endpoint.id, ...evaluateCell(candidates, seen, conforms), lastSeen });
    }
    if (cells.length === 0) return [];
    await manager.query(
      `INSERT INTO evidence_cells AS c (row_id, endpoint_id, version_id, version, drift, last_seen)
       SELECT $1::uuid, x."endpointId", x."versionId", x.version, x.drift, x."lastSeen"
         FROM jsonb_to_recordset($2::jsonb) AS x("endpointId" uuid, "versionId" uuid, version text, drift boolean, "lastSeen" timestamptz)
        ORDER BY x."endpointId"
       ON CONFLICT (row_id, endpoint_id) DO UPDATE
         SET version_id = EXCLUDED.version_id, version = EXCLUDED.version, drift = EXCLUDED.drift, last_seen = greatest(c.last_seen, EXCLUDED.last_seen)`,
      [row.id, JSON.stringify(cells)],
    );
    const changed = cells.filter((cell) => {
      const old = previous.get(cell.endpointId);
      return (
        old === undefined ||
        old.versionId !== cell.versionId ||
        old.version !== cell.version ||
        old.drift !== cell.drift
      );
    });
    await this.moveCurrent(manager, project, row, cells, endpoints);
    return changed.map((cell) => cell.endpointId);
  }

  /**
   * "What runs there now" per (kind, scope, endpoint) follows the newest row (by first evidence)
   * that saw the endpoint, so traffic trickling in from an older build does not move it back.
   */
  private async moveCurrent(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    cells: ReadonlyArray<CellValue & { endpointId: string; lastSeen: string }>,
    endpoints: readonly EndpointRef[],
  ): Promise<void> {
    const current: Array<{ endpointId: string; rowId: string; rowFirstSeen: Date; version: string; drift: boolean }> =
      await manager.query(
        `SELECT endpoint_id AS "endpointId", row_id AS "rowId", row_first_seen AS "rowFirstSeen", version, drift FROM evidence_current
        WHERE project_id = $1 AND kind = $2 AND scope = $3 AND endpoint_id = ANY($4::uuid[])
        ORDER BY endpoint_id FOR UPDATE`,
        [project.id, row.kind, row.scope, cells.map((cell) => cell.endpointId)],
      );
    const byEndpoint = new Map(current.map((c) => [c.endpointId, c]));
    const moves = cells.filter((cell) => {
      const now = byEndpoint.get(cell.endpointId);
      return now === undefined || now.rowId === row.id || now.rowFirstSeen.getTime() <= row.firstSeen.getTime();
    });
    if (moves.length === 0) return;
    await manager.query(
      `INSERT INTO evidence_current AS c (project_id, kind, scope, endpoint_id, row_id, row_first_seen, version_id, version, drift, last_seen)
       SELECT $1::uuid, $2, $3, x."endpointId", $4::uuid, $5::timestamptz, x."versionId", x.version, x.drift, x."lastSeen"
         FROM jsonb_to_recordset($6::jsonb) AS x("endpointId" uuid, "versionId" uuid, version text, drift boolean, "lastSeen" timestamptz)
        ORDER BY x."endpointId"
       ON CONFLICT (project_id, kind, scope, endpoint_id) DO UPDATE
         SET row_id = EXCLUDED.row_id, row_first_seen = EXCLUDED.row_first_seen, version_id = EXCLUDED.version_id,
             version = EXCLUDED.version, drift = EXCLUDED.drift, last_seen = EXCLUDED.last_seen`,
      [project.id, row.kind, row.scope, row.id, row.firstSeen, JSON.stringify(moves)],
    );
    const names = new Map(endpoints.map((e) => [e.id, e]));
    for (const cell of moves) {
      const before = byEndpoint.get(cell.endpointId);
      if (before !== undefined && before.version === cell.version && before.drift === cell.drift) continue;
      const endpoint = names.get(cell.endpointId) as EndpointRef;
      await this.notifier.emit(manager, project, {
        type: 'version.changed',
        endpointId: cell.endpointId,
        method: endpoint.method,
        path: endpoint.path,
        environment: { kind: row.kind, name: row.name },
        pullRequest: row.pullRequest,
        build: row.build,
        commit: row.commit,
        previous: before?.version ?? null,
        version: cell.version,
        drift: cell.drift,
      });
    }
  }

  /** Shapes read through the transaction: a batch's new shapes are not committed yet. */
  private loadShapes(manager: EntityManager, exchanges: readonly ObservationRow[]): Promise<Map<string, Shape>> {
    const fingerprints = exchanges
      .flatMap((e) => [e.requestShape, e.responseShape])
      .filter((fp): fp is string => fp !== null);
    return this.shapes.loadMany(fingerprints, async (missing) => {
      const rows: Array<{ fingerprint: string; shape: Shape }> = await manager.query(
        'SELECT fingerprint, shape FROM shapes WHERE fingerprint = ANY($1::text[])',
        [missing],
      );
      return rows.map((r) => [r.fingerprint, r.shape]);
    });
  }

  /** Versions read through the transaction: a version made in it is not committed yet. */
  private loadVersionShapes(manager: EntityManager, ids: readonly string[]): Promise<Map<string, EndpointShapes>> {
    return this.versionShapes.loadMany(ids, async (missing) => {
      const rows: Array<EndpointShapes & { id: string }> = await manager.query(
        'SELECT id, request, responses, parameters FROM endpoint_versions WHERE id = ANY($1::uuid[])',
        [missing],
      );
      return rows.map(({ id, request, responses, parameters }) => [id, { request, responses, parameters }]);
    });
  }
}
