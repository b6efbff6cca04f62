import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import {
  type CaptureResponse,
  type ChangeResponse,
  diffEndpoint,
  type DiffResponse,
  formatVersion,
  isIgnored,
  type ObservedEndpointResponse,
  parseIgnoreRules,
  type Shape,
  type ShapeChange,
  toJsonSchema,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import type { DataSource, Repository } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { type DocumentedVersion, VersionStore } from '../endpoints/version-store';
import type { ProjectEntity } from '../projects/project.entity';
import { CaptureEntity } from './capture.entity';
import { rowConforms } from './conformance';
import { fingerprintsOf, type ObservationRow, observedEndpointShapes } from './observed-shapes';
import { ShapeStore } from './shape-store';
import { StampedViewCache, ViewList } from './view-cache';

/**
 * Views kept in memory per kind (undocumented, diffs, interactions), one entry per capture: enough
 * for a captures page (20 by default) and the captures being reviewed. An entry holds one list of
 * a capture's endpoints and its JSON text (about 1 MB for 5,000 undocumented endpoints).
 */
const CACHED_VIEWS_PER_KIND = 32;

/** Columns of an observation row, as `ObservationRow` fields. */
const ROW_COLUMNS = `o.method, o.path, o.status,
  o.request_content_type AS "requestContentType", o.request_shape AS "requestShape",
  o.response_content_type AS "responseContentType", o.response_shape AS "responseShape"`;

/**
 * Order of the views' lists: by path, then method (`localeCompare`, the order the API has always
 * had). The queries return rows in byte order (cheap in PostgreSQL, unlike a locale-aware sort),
 * which is close to this order for paths, so this sort does little work.
 */
function byPathThenMethod(a: { method: string; path: string }, b: { method: string; path: string }): number {
  return a.path.localeCompare(b.path) || a.method.localeCompare(b.method);
}

/** A change as the API writes it: shapes as JSON Schema. */
export function toChangeResponse(change: ShapeChange): ChangeResponse {
  return {
    change: change.change,
    in: change.in,
    ...(change.status === undefined ? {} : { status: change.status }),
    at: change.at,
    ...(change.documented === undefined ? {} : { documented: toJsonSchema(change.documented) }),
    ...(change.observed === undefined ? {} : { observed: toJsonSchema(change.observed) }),
    breaking: change.breaking,
  };
}

/** What the views read of a capture. */
type ViewedCapture = Pick<CaptureEntity, 'id' | 'rules'>;

/**
 * The stamp columns (`CapturesService.stampOf`) of capture `$1` in project `$2`, counting batches
 * from window start `$3` (a timestamptz text; NULL or too old: a new window starts now, less a
 * margin): the window start, the capture's batches committed since it, and the project's
 * documentation revision.
 *
 * Why a window: batch ids are pruned after `SPECTATOR_BATCH_RETENTION_DAYS` (at least one day), so
 * a count of all of a capture's batch ids could fall by one and rise by one between two requests.
 * Rows in a window that starts at most 2 hours 10 minutes ago are never pruned, and every batch
 * committed after a stamp was read has `committed_at` (its transaction's start) in the window
 * unless its transaction ran for longer than the 10-minute margin: so the count only grows, and an
 * unchanged count means no new batch. PostgreSQL's clock is used throughout.
 */
const STAMP_COLUMNS = `w.since::text AS since,
  (SELECT count(*) FROM processed_batches b WHERE b.capture_id = $1 AND b.committed_at >= w.since)::text AS batches,
  (SELECT p.documentation_revision FROM projects p WHERE p.id = $2)::text AS documentation`;
const STAMP_WINDOW = `(SELECT CASE WHEN $3::timestamptz > now() - interval '2 hours' THEN $3::timestamptz ELSE now() - interval '10 minutes' END AS since) w`;

/** A stamp as read by a query with STAMP_COLUMNS. */
interface StampRow {
  since: string;
  batches: string;
  documentation: string;
}

function captureNotFound(project: ProjectEntity, captureId: string): DomainError {
  return new DomainError(ErrorCode.CaptureNotFound, `capture ${captureId} does not exist in project ${project.slug}`);
}

/** The cache key of a capture's views. */
function cacheKey(project: ProjectEntity, capture: Pick<ViewedCapture, 'id'>): string {
  return `${project.id} ${capture.id}`;
}

/** A view's full stamp: the database stamp and the rules the view applies. */
function viewStamp(stamp: string, capture: Pick<CaptureEntity, 'rules'>): string {
  return `${stamp} ${JSON.stringify(capture.rules)}`;
}

/** A predicate "is this method + path visible" for a capture's rules in effect. */
export function visibilityOf(capture: Pick<CaptureEntity, 'rules'>): (method: string, path: string) => boolean {
  const { rules } = parseIgnoreRules(capture.rules);
  if (rules.length === 0) return () => true;
  const memo = new Map<string, boolean>();
  return (method, path) => {
    const key = `${method} ${path}`;
    let visible = memo.get(key);
    if (visible === undefined) {
      visible = !isIgnored(rules, method, path);
      memo.set(key, visible);
    }
    return visible;
  };
}

/**
 * The views of captured traffic. Ignore rules in effect for a capture are applied here, on every
 * request, so a rule added later hides traffic already captured on the next reload.
 */
@Injectable()
export class CapturesService {
  /**
   * Whether an observation row conforms to a version, by (version, status, content types,
   * fingerprints). Versions and shapes never change, so the answer never does either.
   */
  private readonly conformance = new LruCache<string, boolean>(200_000);

  /**
   * The views of recently read captures, each with the stamp it was computed at (`stampOf`): a
   * dashboard reloading a capture, or the captures list, recomputes only what changed since.
   */
  private readonly cachedUndocumented = new StampedViewCache<ViewList<UndocumentedEndpointResponse>>(CACHED_VIEWS_PER_KIND);
  private readonly cachedDiffs = new StampedViewCache<ViewList<DiffResponse>>(CACHED_VIEWS_PER_KIND);
  private readonly cachedInteractions = new StampedViewCache<number>(CACHED_VIEWS_PER_KIND);
  /** Per capture, the start of the window its batches are counted from (STAMP_COLUMNS). */
  private readonly stampWindows = new LruCache<string, string>(CACHED_VIEWS_PER_KIND * 2);

  constructor(
    @InjectRepository(CaptureEntity) private readonly captures: Repository<CaptureEntity>,
    @InjectDataSource() private readonly db: DataSource,
    private readonly shapes: ShapeStore,
    private readonly versions: VersionStore,
  ) {}

  /** @throws DomainError CaptureNotFound unless the capture belongs to the project. */
  async byId(project: ProjectEntity, id: string): Promise<CaptureEntity> {
    const capture = await this.captures.findOneBy({ id, projectId: project.id });
    if (!capture) throw captureNotFound(project, id);
    return capture;
  }

  /** Captures newest first, with their counts. `before`: an ISO time to page back from. */
  async list(project: ProjectEntity, limit: number, before?: Date): Promise<CaptureResponse[]> {
    const query = this.captures
      .createQueryBuilder('c')
      .where('c.project_id = :projectId', { projectId: project.id })
      .orderBy('c.started_at', 'DESC')
      .addOrderBy('c.id', 'DESC')
      .limit(limit);
    if (before) query.andWhere('c.started_at < :before', { before });
    const rows = await query.getMany();
    return Promise.all(rows.map((capture) => this.summary(project, capture)));
  }

  /** One capture with its counts. */
  async summary(project: ProjectEntity, capture: CaptureEntity): Promise<CaptureResponse> {
    const stamp = await this.stampOf(project, capture.id);
    const [interactions, undocumented, diffs] = await Promise.all([
      this.cachedInteractions.get(cacheKey(project, capture), viewStamp(stamp, capture), () => this.computeInteractions(capture)),
      this.undocumentedAt(project, capture, stamp),
      this.diffsAt(project, capture, stamp),
    ]);
    return {
      id: capture.id,
      environment: { kind: capture.environmentKind, name: capture.environmentName },
      commit: capture.commit,
      build: capture.build,
      pullRequest: capture.pullRequest,
      startedAt: capture.startedAt.toISOString(),
      endedAt: capture.endedAt?.toISOString() ?? null,
      interactions,
      undocumented: undocumented.items.length,
      diffs: diffs.items.length,
      rules: capture.rules,
    };
  }

  /** Interactions of a capture's visible endpoints. */
  private async computeInteractions(capture: ViewedCapture): Promise<number> {
    const visible = visibilityOf(capture);
    const totals: Array<{ method: string; path: string; count: number }> = await this.db.query(
      'SELECT method, path, interactions::float8 AS count FROM capture_endpoints WHERE capture_id = $1',
      [capture.id],
    );
    return totals.filter((row) => visible(row.method, row.path)).reduce((sum, row) => sum + row.count, 0);
  }

  /**
   * What a capture's views depend on that can change, read before the views' own queries: the
   * capture's batches committed since its window start and the project's documentation revision
   * (both only grow; see STAMP_COLUMNS). Rules in effect come from the capture row (`viewStamp`).
   */
  private async stampOf(project: ProjectEntity, captureId: string): Promise<string> {
    const key = cacheKey(project, { id: captureId });
    const [row] = (await this.db.query(`SELECT ${STAMP_COLUMNS} FROM ${STAMP_WINDOW}`, [captureId, project.id, this.stampWindows.get(key) ?? null])) as StampRow[];
    return this.stampText(key, row);
  }

  /** The stamp as the caches compare it; remembers the capture's window start. */
  private stampText(key: string, row: StampRow | undefined): string {
    if (row === undefined) return '';
    this.stampWindows.set(key, row.since);
    return `${row.since} ${row.batches} ${row.documentation}`;
  }

  /**
   * A view of a capture as the JSON text the API sends: the capture's rules and its stamp come in
   * one query; the text is made once per computed view.
   * @throws DomainError CaptureNotFound unless the capture belongs to the project.
   */
  private async viewJson<T>(project: ProjectEntity, captureId: string, read: (capture: ViewedCapture, stamp: string) => Promise<ViewList<T>>): Promise<string> {
    const key = cacheKey(project, { id: captureId });
    const [row] = (await this.db.query(`SELECT c.rules, ${STAMP_COLUMNS} FROM captures c, ${STAMP_WINDOW} WHERE c.id = $1 AND c.project_id = $2`, [
      captureId,
      project.id,
      this.stampWindows.get(key) ?? null,
    ])) as Array<StampRow & { rules: string[] }>;
    if (!row) throw captureNotFound(project, captureId);
    return (await read({ id: captureId, rules: row.rules }, this.stampText(key, row))).json();
  }

  /** `UndocumentedEndpointResponse[]` as JSON text. */
  undocumentedJson(project: ProjectEntity, captureId: string): Promise<string> {
    return this.viewJson(project, captureId, (capture, stamp) => this.undocumentedAt(project, capture, stamp));
  }

  /**
   * Endpoints seen in a capture without committed documentation, with their count of interest.
   * The result is shared with later callers: do not modify it.
   */
  async undocumentedOf(project: ProjectEntity, capture: CaptureEntity): Promise<readonly UndocumentedEndpointResponse[]> {
    return (await this.undocumentedAt(project, capture, await this.stampOf(project, capture.id))).items;
  }

  private undocumentedAt(project: ProjectEntity, capture: ViewedCapture, stamp: string): Promise<ViewList<UndocumentedEndpointResponse>> {
    return this.cachedUndocumented.get(cacheKey(project, capture), viewStamp(stamp, capture), async () => new ViewList(await this.computeUndocumented(project, capture)));
  }

  /** The undocumented view, read from the summaries the ingest transaction keeps (one row per endpoint). */
  private async computeUndocumented(project: ProjectEntity, capture: ViewedCapture): Promise<UndocumentedEndpointResponse[]> {
    const visible = visibilityOf(capture);
    const rows: UndocumentedEndpointResponse[] = await this.db.query(
      `SELECT ce.method, ce.path, ce.interactions::float8 AS interactions, ce.interest::float8 AS count
         FROM capture_endpoints ce
        WHERE ce.capture_id = $1
          AND NOT EXISTS (SELECT 1 FROM endpoints e
                           WHERE e.project_id = $2 AND e.method = ce.method AND e.path = ce.path AND e.current_version_id IS NOT NULL)`,
      [capture.id, project.id],
    );
    // Sorted here, not in SQL: the same order as diffs, and a sort in the query cost ~5 of its 34 ms (5,000 rows).
    return rows.filter((row) => visible(row.method, row.path)).sort(byPathThenMethod);
  }

  /** `DiffResponse[]` as JSON text. */
  diffsJson(project: ProjectEntity, captureId: string): Promise<string> {
    return this.viewJson(project, captureId, (capture, stamp) => this.diffsAt(project, capture, stamp));
  }

  /**
   * Differences between a capture's traffic and the current documentation (`computeDiffs`). The
   * result is shared with later callers: do not modify it.
   */
  async diffsOf(project: ProjectEntity, capture: CaptureEntity): Promise<readonly DiffResponse[]> {
    return (await this.diffsAt(project, capture, await this.stampOf(project, capture.id))).items;
  }

  private diffsAt(project: ProjectEntity, capture: ViewedCapture, stamp: string): Promise<ViewList<DiffResponse>> {
    return this.cachedDiffs.get(cacheKey(project, capture), viewStamp(stamp, capture), async () => new ViewList(await this.computeDiffs(project, capture)));
  }

  /**
   * Differences between a capture's traffic and the current documentation: per documented
   * endpoint, the rows that do not conform, their interactions, and the classified changes.
   * Only endpoints whose cached flag says they differ, or whose flag is stale (a new version, or
   * a new observation key since it was computed), have their observation rows read; stale flags
   * are written back so the next read skips them.
   */
  private async computeDiffs(project: ProjectEntity, capture: ViewedCapture): Promise<DiffResponse[]> {
    const visible = visibilityOf(capture);
    const candidates: Array<{ endpointId: string; versionId: string; method: string; path: string; revision: string; stale: boolean }> = await this.db.query(
      `SELECT e.id AS "endpointId", e.current_version_id AS "versionId", ce.method, ce.path, ce.revision::text AS revision,
              (ce.checked_version IS DISTINCT FROM e.current_version_id OR ce.checked_revision IS DISTINCT FROM ce.revision) AS stale
         FROM capture_endpoints ce
         JOIN endpoints e ON e.project_id = $2 AND e.method = ce.method AND e.path = ce.path
        WHERE ce.capture_id = $1 AND e.current_version_id IS NOT NULL
          AND (ce.differs IS NOT FALSE OR ce.checked_version IS DISTINCT FROM e.current_version_id OR ce.checked_revision IS DISTINCT FROM ce.revision)`,
      [capture.id, project.id],
    );
    const wanted = candidates.filter((row) => visible(row.method, row.path));
    if (wanted.length === 0) return [];
    const rows: ObservationRow[] = await this.db.query(
      `SELECT ${ROW_COLUMNS}, o.count::float8 AS count
         FROM observations o
         JOIN unnest($2::text[], $3::text[]) AS w(method, path) ON o.method = w.method AND o.path = w.path
        WHERE o.capture_id = $1`,
      [capture.id, wanted.map((row) => row.method), wanted.map((row) => row.path)],
    );
    const rowsByEndpoint = new Map<string, ObservationRow[]>();
    for (const row of rows) {
      const key = `${row.method} ${row.path}`;
      rowsByEndpoint.set(key, [...(rowsByEndpoint.get(key) ?? []), row]);
    }
    const [versions, shapes] = await Promise.all([this.versions.load(wanted.map((row) => row.versionId)), this.shapes.load(fingerprintsOf(rows))]);

    const checked: Array<{ method: string; path: string; versionId: string; revision: string; differs: boolean }> = [];
    const diffs: DiffResponse[] = [];
    for (const candidate of wanted) {
      const version = versions.get(candidate.versionId);
      if (version === undefined) continue;
      const offending = (rowsByEndpoint.get(`${candidate.method} ${candidate.path}`) ?? []).filter((row) => !this.conforms(version, row, shapes));
      if (candidate.stale) checked.push({ method: candidate.method, path: candidate.path, versionId: candidate.versionId, revision: candidate.revision, differs: offending.length > 0 });
      if (offending.length === 0) continue;
      const changes = diffEndpoint(version, observedEndpointShapes(offending, shapes));
      if (changes.length === 0) continue;
      diffs.push({
        endpointId: candidate.endpointId,
        method: candidate.method,
        path: candidate.path,
        version: formatVersion(version),
        interactions: offending.reduce((sum, row) => sum + row.count, 0),
        breaking: changes.some((change) => change.breaking),
        changes: changes.map(toChangeResponse),
      });
    }
    if (checked.length > 0) await this.recordChecks(capture.id, checked);
    return diffs.sort(byPathThenMethod);
  }

  /** Whether a row conforms to a version, cached (versions and shapes never change once written). */
  private conforms(version: DocumentedVersion, row: ObservationRow, shapes: ReadonlyMap<string, Shape>): boolean {
    const key = `${version.id}\u0000${row.status}\u0000${row.requestContentType}\u0000${row.requestShape}\u0000${row.responseContentType}\u0000${row.responseShape}`;
    let conforms = this.conformance.get(key);
    if (conforms === undefined) {
      conforms = rowConforms(version, row, shapes);
      this.conformance.set(key, conforms);
    }
    return conforms;
  }

  /**
   * Stores freshly computed diff flags with the version and revision they were computed for. The
   * revision was read before the observation rows, so a key committed in between leaves the flag
   * stale (recomputed next time), never wrongly fresh. Rows an ingest transaction holds are
   * skipped rather than waited for (no lock-order deadlock with ingest; they stay stale).
   */
  private async recordChecks(captureId: string, checked: ReadonlyArray<{ method: string; path: string; versionId: string; revision: string; differs: boolean }>): Promise<void> {
    await this.db.query(
      `UPDATE capture_endpoints ce SET checked_version = c.version_id, checked_revision = c.revision, differs = c.differs
          FROM unnest($2::text[], $3::text[], $4::uuid[], $5::bigint[], $6::boolean[]) AS c(method, path, version_id, revision, differs)
        WHERE ce.capture_id = $1 AND ce.method = c.method AND ce.path = c.path
          AND (ce.capture_id, ce.method, ce.path) IN (SELECT capture_id, method, path FROM capture_endpoints
                                                       WHERE capture_id = $1 AND (method, path) IN (SELECT * FROM unnest($2::text[], $3::text[]))
                                                         FOR UPDATE SKIP LOCKED)`,
      [captureId, checked.map((c) => c.method), checked.map((c) => c.path), checked.map((c) => c.versionId), checked.map((c) => c.revision), checked.map((c) => c.differs)],
    );
  }

  /** The merged observed shapes of one endpoint in a capture, for review. */
  async observed(project: ProjectEntity, captureId: string, method: string, path: string): Promise<ObservedEndpointResponse> {
    const capture = await this.byId(project, captureId);
    const { rows, query, requestHeaders } = await this.endpointRows(capture, method, path);
    const shapes = await this.shapes.load(fingerprintsOf(rows));
    const observed = observedEndpointShapes(rows, shapes);
    return {
      method,
      path,
      interactions: rows.reduce((sum, row) => sum + row.count, 0),
      request: observed.request && { contentType: observed.request.contentType, shape: observed.request.shape && toJsonSchema(observed.request.shape) },
      responses: observed.responses.map((r) => ({ status: r.status, contentType: r.contentType ?? '', shape: r.shape && toJsonSchema(r.shape) })),
      query,
      requestHeaders,
    };
  }

  /**
   * The visible observation rows of one endpoint in a capture, with the query and request header
   * names seen. @throws DomainError BadInput when the endpoint was not observed (or is ignored).
   */
  async endpointRows(capture: CaptureEntity, method: string, path: string): Promise<{ rows: ObservationRow[]; query: string[]; requestHeaders: string[] }> {
    const rows: Array<ObservationRow & { query: string[]; requestHeaders: string[] }> = visibilityOf(capture)(method, path)
      ? await this.db.query(
          `SELECT ${ROW_COLUMNS}, o.count::float8 AS count, o.query, o.request_headers AS "requestHeaders"
             FROM observations o WHERE o.capture_id = $1 AND o.method = $2 AND o.path = $3`,
          [capture.id, method, path],
        )
      : [];
    if (rows.length === 0) throw new DomainError(ErrorCode.BadInput, `${method} ${path} was not observed in capture ${capture.id}`);
    const union = (lists: string[][]): string[] => [...new Set(lists.flat())].sort();
    return { rows, query: union(rows.map((row) => row.query)), requestHeaders: union(rows.map((row) => row.requestHeaders)) };
  }
}
