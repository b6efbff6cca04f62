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
  type ShapeChange,
  toJsonSchema,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import type { DataSource, Repository } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { VersionStore } from '../versions/version-store';
import type { ProjectEntity } from '../projects/project.entity';
import { CaptureEntity } from './capture.entity';
import { ConformanceCache } from './conformance';
import {
  acceptedStatus,
  fingerprintsOf,
  type ObservationRow,
  observedEndpointShapes,
  rejectedRequests,
  ROW_COLUMNS,
} from './observed-shapes';
import { ShapeStore } from './shape-store';
import {
  type ChangedEndpoints,
  type EndpointKey,
  endpointKeyText,
  KeptViews,
  sortedListUpkeep,
  type ViewBasis,
  type ViewList,
  type ViewUpkeep,
} from '../views/view-cache';

/**
 * Views kept in memory per kind (undocumented, diffs, interactions), one entry per capture: enough
 * for a captures page (20 by default) and the captures being reviewed. An entry holds one list of
 * a capture's endpoints and its JSON text (about 1 MB for 5,000 undocumented endpoints).
 */
const CACHED_VIEWS_PER_KIND = 32;

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
 * Above this many changed endpoints a kept view is computed in full rather than patched: reading
 * that many summaries by key costs about what reading all of a large capture's does.
 */
const MAX_PATCHED_ENDPOINTS = 2_000;

/**
 * The inputs of capture `$1`'s views in project `$2`, all in the statement's one snapshot: the
 * capture's rules, the project's documentation revision, the snapshot and PostgreSQL's clock, and
 * for each kept view's snapshot in `$3` the keys the batches since touched (`changes[i]`: parallel
 * `methods` and `paths`, repeats possible; `unknown` when a batch did not record its keys).
 *
 * A batch's changes are seen by a snapshot exactly when its transaction is (`pg_visible_in_snapshot`
 * on the `xid` its `processed_batches` row records, in the same transaction as its summaries): the
 * batches a kept view's snapshot did not see are those committed since, whatever order
 * transactions took their ids and committed in. The index on `(capture_id, xid)` finds them from
 * the snapshot's xmin (no transaction below it was running then). Keys are deduplicated and
 * sorted in Node: in SQL that cost more than the rest of the statement (collation-aware compares).
 */
const VIEW_INPUTS = `
  WITH kept AS (
    SELECT k.i, k.snapshot::pg_snapshot AS snapshot FROM unnest($3::text[]) WITH ORDINALITY AS k(snapshot, i)
  ), batches AS (
    SELECT kept.i, b.touched_methods, b.touched_paths
      FROM kept JOIN processed_batches b
        ON b.capture_id = $1 AND b.xid >= pg_snapshot_xmin(kept.snapshot) AND NOT pg_visible_in_snapshot(b.xid, kept.snapshot)
  ), changes AS (
    SELECT kept.i, bool_or(b.i IS NOT NULL AND b.touched_methods IS NULL) AS unknown,
           -- Two aggregates of one query level read the rows in the same order: the arrays stay paired.
           array_agg(t.method) FILTER (WHERE t.method IS NOT NULL) AS methods, array_agg(t.path) FILTER (WHERE t.method IS NOT NULL) AS paths
      FROM kept LEFT JOIN batches b ON b.i = kept.i
      LEFT JOIN LATERAL unnest(b.touched_methods, b.touched_paths) AS t(method, path) ON true
     GROUP BY kept.i
  )
  SELECT c.rules, p.documentation_revision::text AS documentation, pg_current_snapshot()::text AS snapshot,
         extract(epoch FROM now())::float8 AS "takenAt",
         (SELECT json_agg(json_build_object('unknown', changes.unknown, 'methods', changes.methods, 'paths', changes.paths) ORDER BY changes.i) FROM changes) AS changes
    FROM captures c JOIN projects p ON p.id = c.project_id
   WHERE c.id = $1 AND c.project_id = $2`;

/** A row of VIEW_INPUTS. */
interface ViewInputsRow {
  rules: string[];
  documentation: string;
  snapshot: string;
  takenAt: number;
  changes: Array<{ unknown: boolean; methods: string[] | null; paths: string[] | null }> | null;
}

/**
 * The changed endpoints of one entry of VIEW_INPUTS' `changes`: each once, in byte order (the
 * order of the summaries' primary key, near enough, so reading them walks the index in order);
 * null when unknown or more than MAX_PATCHED_ENDPOINTS.
 */
function changedEndpoints(
  change: { unknown: boolean; methods: string[] | null; paths: string[] | null } | undefined,
): ChangedEndpoints {
  if (change === undefined || change.unknown) return null;
  const methods = change.methods ?? [];
  const paths = change.paths ?? [];
  const byKey = new Map<string, EndpointKey>();
  methods.forEach((method, i) => {
    const path = paths[i] as string;
    byKey.set(endpointKeyText({ method, path }), { method, path });
  });
  if (byKey.size > MAX_PATCHED_ENDPOINTS) return null;
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, endpoint]) => endpoint);
}

/** The inputs of a capture's views now, and per kept view asked about what changed since its basis. */
interface ViewInputs {
  capture: ViewedCapture;
  basis: ViewBasis;
  changed: ChangedEndpoints[];
}

/** Interactions of a capture's visible endpoints: the total the captures list shows, and per endpoint (to patch it). */
interface InteractionTotals {
  total: number;
  byEndpoint: ReadonlyMap<string, number>;
}

/** A documented endpoint: its key, id and current version. */
interface DocumentedEndpoint extends EndpointKey {
  endpointId: string;
  versionId: string;
}

/** A project's documented endpoints (by `endpointKeyText`) at a documentation revision. */
interface DocumentedEndpoints {
  revision: string;
  byKey: ReadonlyMap<string, DocumentedEndpoint>;
}

/**
 * Where the views read summaries (`ce`) from: all of capture `$1`'s, or only the `only` endpoints'
 * (each by primary key; their methods and paths become parameters `firstParameter` and the next).
 * Returns the FROM clause and its extra parameters.
 */
function summariesOf(
  only: readonly EndpointKey[] | undefined,
  firstParameter: number,
): { from: string; parameters: unknown[] } {
  if (only === undefined) return { from: 'capture_endpoints ce', parameters: [] };
  return {
    from: `unnest($${firstParameter}::text[], $${firstParameter + 1}::text[]) AS k(method, path)
           JOIN capture_endpoints ce ON ce.capture_id = $1 AND ce.method = k.method AND ce.path = k.path`,
    parameters: [only.map((e) => e.method), only.map((e) => e.path)],
  };
}

function captureNotFound(project: ProjectEntity, captureId: string): DomainError {
  return new DomainError(ErrorCode.CaptureNotFound, `capture ${captureId} does not exist in project ${project.slug}`);
}

/** The cache key of a capture's views. */
function cacheKey(project: ProjectEntity, capture: Pick<ViewedCapture, 'id'>): string {
  return `${project.id} ${capture.id}`;
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
  /** Whether an observation row conforms to a version (never changes once known). */
  private readonly conformance = new ConformanceCache();

  /**
   * The views of recently read captures, each with the basis it was read at (`readInputs`): a
   * dashboard reloading a capture, or the captures list, reads again only the endpoints that
   * changed since.
   */
  private readonly keptUndocumented = new KeptViews<ViewList<UndocumentedEndpointResponse>>(CACHED_VIEWS_PER_KIND);
  private readonly keptDiffs = new KeptViews<ViewList<DiffResponse>>(CACHED_VIEWS_PER_KIND);
  private readonly keptInteractions = new KeptViews<InteractionTotals>(CACHED_VIEWS_PER_KIND);
  /** Per project, its documented endpoints at a documentation revision (`documentedAt`). */
  private readonly documented = new LruCache<string, DocumentedEndpoints>(CACHED_VIEWS_PER_KIND);

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
    const key = cacheKey(project, capture);
    const since = [
      this.keptInteractions.basisOf(key),
      this.keptUndocumented.basisOf(key),
      this.keptDiffs.basisOf(key),
    ] as const;
    const inputs = await this.readInputs(project, capture.id, since);
    const [interactions, undocumented, diffs] = await Promise.all([
      this.keptInteractions.get(
        key,
        since[0],
        inputs.basis,
        inputs.changed[0] ?? null,
        this.interactionsUpkeep(inputs),
      ),
      this.keptUndocumented.get(
        key,
        since[1],
        inputs.basis,
        inputs.changed[1] ?? null,
        this.undocumentedUpkeep(project, inputs),
      ),
      this.keptDiffs.get(key, since[2], inputs.basis, inputs.changed[2] ?? null, this.diffsUpkeep(project, inputs)),
    ]);
    return {
      id: capture.id,
      environment: { kind: capture.environmentKind, name: capture.environmentName },
      commit: capture.commit,
      build: capture.build,
      pullRequest: capture.pullRequest,
      startedAt: capture.startedAt.toISOString(),
      endedAt: capture.endedAt?.toISOString() ?? null,
      interactions: interactions.total,
      undocumented: undocumented.items.length,
      diffs: diffs.items.length,
      rules: capture.rules,
      unmatched: { requests: capture.unmatchedRequests, paths: capture.unmatchedPaths },
      overflow: { requests: capture.overflowRequests },
    };
  }

  /**
   * What a capture's views depend on, read in one statement (VIEW_INPUTS) before the views' own
   * queries, and for each kept view's basis in `since` what changed since.
   * @throws DomainError CaptureNotFound unless the capture belongs to the project.
   */
  private async readInputs(
    project: ProjectEntity,
    captureId: string,
    since: ReadonlyArray<ViewBasis | undefined>,
  ): Promise<ViewInputs> {
    const [row] = (await this.db.query(VIEW_INPUTS, [
      captureId,
      project.id,
      since.map((basis) => basis?.snapshot ?? null),
    ])) as ViewInputsRow[];
    if (!row) throw captureNotFound(project, captureId);
    return {
      capture: { id: captureId, rules: row.rules },
      basis: {
        snapshot: row.snapshot,
        takenAt: row.takenAt,
        documentation: row.documentation,
        rules: JSON.stringify(row.rules),
      },
      changed: since.map((_, i) => changedEndpoints(row.changes?.[i])),
    };
  }

  /** One view of a capture, kept in `views` and brought up to date by `upkeep`. */
  private async viewOf<T>(
    views: KeptViews<T>,
    project: ProjectEntity,
    captureId: string,
    upkeep: (inputs: ViewInputs) => ViewUpkeep<T>,
  ): Promise<T> {
    const key = cacheKey(project, { id: captureId });
    const since = views.basisOf(key);
    const inputs = await this.readInputs(project, captureId, [since]);
    return views.get(key, since, inputs.basis, inputs.changed[0] ?? null, upkeep(inputs));
  }

  /**
   * The documented endpoints of a project at documentation revision `revision` or later (kept per
   * project, read again when a later revision is asked for), by `endpointKeyText`.
   */
  private async documentedAt(project: ProjectEntity, revision: string): Promise<DocumentedEndpoints> {
    const kept = this.documented.get(project.id);
    if (kept !== undefined && BigInt(kept.revision) >= BigInt(revision)) return kept;
    // One statement: the revision and the endpoints it counts come from one snapshot.
    const rows: Array<{ revision: string } & ({ endpointId: null } | DocumentedEndpoint)> = await this.db.query(
      `SELECT p.documentation_revision::text AS revision, e.method, e.path, e.id AS "endpointId", e.current_version_id AS "versionId"
         FROM projects p LEFT JOIN endpoints e ON e.project_id = p.id AND e.current_version_id IS NOT NULL
        WHERE p.id = $1`,
      [project.id],
    );
    const documented: DocumentedEndpoints = {
      revision: rows[0]?.revision ?? revision,
      byKey: new Map(
        rows.flatMap((row) =>
          row.endpointId === null
            ? []
            : [
                [
                  endpointKeyText(row),
                  { method: row.method, path: row.path, endpointId: row.endpointId, versionId: row.versionId },
                ] as const,
              ],
        ),
      ),
    };
    this.documented.set(project.id, documented);
    return documented;
  }

  /**
   * The visible changed endpoints of a patch, documented or not at the basis's documentation
   * revision or later: the diffs view reads the documented ones again, the undocumented view the
   * others. The rest leave a view (or stay out of it): documentation only changes with the
   * revision, and a view kept at another revision is computed in full.
   */
  private async splitChanged(
    project: ProjectEntity,
    inputs: ViewInputs,
    changed: readonly EndpointKey[],
  ): Promise<{ documented: DocumentedEndpoint[]; undocumented: EndpointKey[] }> {
    const visible = visibilityOf(inputs.capture);
    const { byKey } = await this.documentedAt(project, inputs.basis.documentation);
    const split = { documented: [] as DocumentedEndpoint[], undocumented: [] as EndpointKey[] };
    for (const endpoint of changed) {
      if (!visible(endpoint.method, endpoint.path)) continue;
      const documented = byKey.get(endpointKeyText(endpoint));
      if (documented === undefined) split.undocumented.push(endpoint);
      else split.documented.push(documented);
    }
    return split;
  }

  /** Interactions of a capture's visible endpoints: all summaries read, or the changed ones again. */
  private interactionsUpkeep({ capture }: ViewInputs): ViewUpkeep<InteractionTotals> {
    const read = async (only?: readonly EndpointKey[]): Promise<Map<string, number>> =>
      new Map((await this.readSummaries(capture, only)).map((row) => [endpointKeyText(row), row.interactions]));
    const totalOf = (byEndpoint: ReadonlyMap<string, number>): number =>
      [...byEndpoint.values()].reduce((sum, count) => sum + count, 0);
    return {
      compute: async () => {
        const byEndpoint = await read();
        return { total: totalOf(byEndpoint), byEndpoint };
      },
      patch: async (kept, changed) => {
        const fresh = await read(changed);
        const byEndpoint = new Map(kept.byEndpoint);
        for (const endpoint of changed) byEndpoint.delete(endpointKeyText(endpoint));
        for (const [key, count] of fresh) byEndpoint.set(key, count);
        return { total: totalOf(byEndpoint), byEndpoint };
      },
    };
  }

  /** `UndocumentedEndpointResponse[]` as JSON text: all, or a page (`ViewList.page`). */
  async undocumentedJson(
    project: ProjectEntity,
    captureId: string,
    after?: EndpointKey,
    limit?: number,
  ): Promise<string> {
    return (
      await this.viewOf(this.keptUndocumented, project, captureId, (inputs) => this.undocumentedUpkeep(project, inputs))
    ).page(after, limit);
  }

  /**
   * Endpoints seen in a capture without committed documentation, with their count of interest.
   * The result is shared with later callers: do not modify it.
   */
  async undocumentedOf(
    project: ProjectEntity,
    capture: CaptureEntity,
  ): Promise<readonly UndocumentedEndpointResponse[]> {
    return (
      await this.viewOf(this.keptUndocumented, project, capture.id, (inputs) =>
        this.undocumentedUpkeep(project, inputs),
      )
    ).items;
  }

  /**
   * The undocumented view: in full, the capture's summaries anti-joined with the documented
   * endpoints; patched, the summaries of the changed endpoints that are not documented
   * (`splitChanged`; no anti-join: a key documented since is counted in a later documentation
   * revision, and the next read computes the view in full).
   */
  private undocumentedUpkeep(
    project: ProjectEntity,
    inputs: ViewInputs,
  ): ViewUpkeep<ViewList<UndocumentedEndpointResponse>> {
    return sortedListUpkeep(async (changed) =>
      changed === undefined
        ? this.readSummaries(inputs.capture, undefined, project)
        : this.readSummaries(inputs.capture, (await this.splitChanged(project, inputs, changed)).undocumented),
    );
  }

  /**
   * Summaries of a capture's visible endpoints (unsorted), as the ingest transaction keeps them
   * (one row per endpoint): all of them, or `only` those endpoints'; with `undocumentedIn`, only
   * endpoints without documentation in that project.
   */
  private async readSummaries(
    capture: ViewedCapture,
    only?: readonly EndpointKey[],
    undocumentedIn?: ProjectEntity,
  ): Promise<UndocumentedEndpointResponse[]> {
    if (only?.length === 0) return [];
    const visible = visibilityOf(capture);
    const summaries = summariesOf(only, undocumentedIn === undefined ? 2 : 3);
    const undocumented = `AND NOT EXISTS (SELECT 1 FROM endpoints e
                                           WHERE e.project_id = $2 AND e.method = ce.method AND e.path = ce.path AND e.current_version_id IS NOT NULL)`;
    const rows: UndocumentedEndpointResponse[] = await this.db.query(
      `SELECT ce.method, ce.path, ce.interactions::float8 AS interactions, ce.interest::float8 AS count
         FROM ${summaries.from}
        WHERE ce.capture_id = $1 ${undocumentedIn === undefined ? '' : undocumented}`,
      [capture.id, ...(undocumentedIn === undefined ? [] : [undocumentedIn.id]), ...summaries.parameters],
    );
    // Sorted by the caller, not in SQL: the same order as diffs, and a sort in the query cost ~5 of its 34 ms (5,000 rows).
    return rows.filter((row) => visible(row.method, row.path));
  }

  /** `DiffResponse[]` as JSON text: all, or a page (`ViewList.page`). */
  async diffsJson(project: ProjectEntity, captureId: string, after?: EndpointKey, limit?: number): Promise<string> {
    return (await this.viewOf(this.keptDiffs, project, captureId, (inputs) => this.diffsUpkeep(project, inputs))).page(
      after,
      limit,
    );
  }

  /**
   * Differences between a capture's traffic and the current documentation (`readDiffs`). The
   * result is shared with later callers: do not modify it.
   */
  async diffsOf(project: ProjectEntity, capture: CaptureEntity): Promise<readonly DiffResponse[]> {
    return (await this.viewOf(this.keptDiffs, project, capture.id, (inputs) => this.diffsUpkeep(project, inputs)))
      .items;
  }

  private diffsUpkeep(project: ProjectEntity, inputs: ViewInputs): ViewUpkeep<ViewList<DiffResponse>> {
    return sortedListUpkeep(async (changed) =>
      this.readDiffs(
        project,
        inputs.capture,
        changed === undefined ? undefined : (await this.splitChanged(project, inputs, changed)).documented,
      ),
    );
  }

  /**
   * Differences between a capture's traffic and the current documentation: per documented
   * endpoint, the rows that do not conform, their interactions, and the classified changes.
   * Only endpoints whose cached flag says they differ, or whose flag is stale (a new version, or
   * a new observation key since it was computed), have their observation rows read; stale flags
   * are written back so the next read skips them. Unsorted; of all the capture's endpoints, or of
   * `only` those.
   */
  private async readDiffs(
    project: ProjectEntity,
    capture: ViewedCapture,
    only?: readonly DocumentedEndpoint[],
  ): Promise<DiffResponse[]> {
    if (only?.length === 0) return [];
    const visible = visibilityOf(capture);
    // The documented endpoints (d): all of the project's, or `only` those (as known to `documentedAt`), each with its summary.
    const documented =
      only === undefined
        ? {
            from: 'capture_endpoints ce JOIN endpoints d ON d.project_id = $2 AND d.method = ce.method AND d.path = ce.path AND d.current_version_id IS NOT NULL',
            parameters: [project.id],
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
    const candidates: Array<{
      endpointId: string;
      versionId: string;
      method: string;
      path: string;
      revision: string;
      stale: boolean;
    }> = await this.db.query(
      `SELECT d.id AS "endpointId", d.current_version_id AS "versionId", ce.method, ce.path, ce.revision::text AS revision,
              (ce.checked_version IS DISTINCT FROM d.current_version_id OR ce.checked_revision IS DISTINCT FROM ce.revision) AS stale
         FROM ${documented.from}
        WHERE ce.capture_id = $1
          AND (ce.differs IS NOT FALSE OR ce.checked_version IS DISTINCT FROM d.current_version_id OR ce.checked_revision IS DISTINCT FROM ce.revision)`,
      [capture.id, ...documented.parameters],
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
      const key = endpointKeyText(row);
      const endpointRows = rowsByEndpoint.get(key);
      if (endpointRows === undefined) rowsByEndpoint.set(key, [row]);
      else endpointRows.push(row);
    }
    const [versions, shapes] = await Promise.all([
      this.versions.load(wanted.map((row) => row.versionId)),
      this.shapes.load(fingerprintsOf(rows)),
    ]);

    const checked: Array<{ method: string; path: string; versionId: string; revision: string; differs: boolean }> = [];
    const diffs: DiffResponse[] = [];
    for (const candidate of wanted) {
      const version = versions.get(candidate.versionId);
      if (version === undefined) continue;
      const endpointRows = rowsByEndpoint.get(endpointKeyText(candidate)) ?? [];
      const offending = endpointRows.filter((row) => !this.conformance.conforms(version.id, version, row, shapes));
      if (candidate.stale)
        checked.push({
          method: candidate.method,
          path: candidate.path,
          versionId: candidate.versionId,
          revision: candidate.revision,
          differs: offending.length > 0,
        });
      if (offending.length === 0) continue;
      // The changes are read from all of the capture's traffic of the endpoint, as accepting them
      // documents it: from the offending rows alone, a field only some clients send looked
      // required (a breaking request change, "→ 2.0") while accepting made it optional (1.1).
      const observed = observedEndpointShapes(endpointRows, shapes);
      // Without an accepted exchange the traffic says nothing of the request: no "request removed".
      const changes = diffEndpoint(
        version,
        endpointRows.some((row) => acceptedStatus(row.status)) ? observed : { ...observed, request: version.request },
      );
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
    return diffs;
  }

  /**
   * Stores freshly computed diff flags with the version and revision they were computed for. The
   * revision was read before the observation rows, so a key committed in between leaves the flag
   * stale (recomputed next time), never wrongly fresh. Rows an ingest transaction holds are
   * skipped rather than waited for (no lock-order deadlock with ingest; they stay stale).
   */
  private async recordChecks(
    captureId: string,
    checked: ReadonlyArray<{ method: string; path: string; versionId: string; revision: string; differs: boolean }>,
  ): Promise<void> {
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

  /** The merged observed shapes of one endpoint in a capture, for review. */
  async observed(
    project: ProjectEntity,
    captureId: string,
    method: string,
    path: string,
  ): Promise<ObservedEndpointResponse> {
    const capture = await this.byId(project, captureId);
    const { rows, query, requestHeaders } = await this.endpointRows(capture, method, path);
    const shapes = await this.shapes.load(fingerprintsOf(rows));
    const observed = observedEndpointShapes(rows, shapes);
    return {
      method,
      path,
      interactions: rows.reduce((sum, row) => sum + row.count, 0),
      request: observed.request && {
        contentType: observed.request.contentType,
        shape: observed.request.shape && toJsonSchema(observed.request.shape),
      },
      responses: observed.responses.map((r) => ({
        status: r.status,
        contentType: r.contentType ?? '',
        shape: r.shape && toJsonSchema(r.shape),
      })),
      rejectedRequests: rejectedRequests(rows, shapes).map((r) => ({ ...r, shape: r.shape && toJsonSchema(r.shape) })),
      query,
      requestHeaders,
    };
  }

  /**
   * The visible observation rows of one endpoint in a capture, with the query and request header
   * names seen. @throws DomainError BadInput when the endpoint was not observed (or is ignored).
   */
  async endpointRows(
    capture: CaptureEntity,
    method: string,
    path: string,
  ): Promise<{ rows: ObservationRow[]; query: string[]; requestHeaders: string[] }> {
    const rows: Array<ObservationRow & { query: string[]; requestHeaders: string[] }> = visibilityOf(capture)(
      method,
      path,
    )
      ? await this.db.query(
          `SELECT ${ROW_COLUMNS}, o.count::float8 AS count
             FROM observations o WHERE o.capture_id = $1 AND o.method = $2 AND o.path = $3`,
          [capture.id, method, path],
        )
      : [];
    if (rows.length === 0)
      throw new DomainError(ErrorCode.BadInput, `${method} ${path} was not observed in capture ${capture.id}`);
    const union = (lists: string[][]): string[] => [...new Set(lists.flat())].sort();
    return {
      rows,
      query: union(rows.map((row) => row.query)),
      requestHeaders: union(rows.map((row) => row.requestHeaders)),
    };
  }
}
