import { Injectable } from '@nestjs/common';
import { type AgentEnvironment, formatVersion, isDocumentableHeader, type MatrixKind } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import { ConformanceCache } from '../captures/conformance';
import { ShapeStore } from '../captures/shape-store';
import { LruCache } from '../common/lru-cache';
import { VersionStore } from '../versions/version-store';
import { matrixTexts } from '../views/matrix-texts';
import { type EventProject, Notifier } from '../webhooks/notifier';
import { UNDOCUMENTED_NAMED } from '../webhooks/transition-events';
import { evaluateCell } from './cell';
import { environmentRowOf, type EnvironmentRowKey } from './environment-row';
import {
  type EndpointRef,
  type EnvironmentRow,
  EvidenceRepository,
  type EvidenceExchangeRow,
  type NewCell,
  type StoredExchange,
} from './evidence.repository';

/** One aggregated exchange of an ingest batch (the fields of the ingest service's aggregated rows). */
export interface BatchExchange extends Omit<EvidenceExchangeRow, 'query' | 'req_h'> {
  /** Query parameter and request header names (absent: not known, then parameters are not compared). */
  query?: string[];
  req_h?: string[];
}

/** What evidence keeps of an exchange: its key, count, last seen, and only the header names worth documenting. */
function evidenceOf(exchange: BatchExchange): EvidenceExchangeRow {
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

/** Whether `version` is a higher major version than `previous` (both `major.minor`): a breaking change. */
export function majorRaised(previous: string | null, version: string): boolean {
  const major = (text: string): number => Number.parseInt(text.split('.')[0] ?? '', 10);
  return previous !== null && major(version) > major(previous);
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

/**
 * A cell a refresh found drifting (`exchanges`: the row's traffic for the endpoint that conforms
 * not to its nearest version, what makes it drift; `appeared`: it did not drift before), or one
 * that stopped drifting (`drift` false, no exchanges).
 */
export interface DriftChange {
  endpoint: EndpointRef;
  version: string;
  drift: boolean;
  appeared: boolean;
  exchanges: readonly StoredExchange[];
}

/** Told in the transaction of each refresh that found drifting cells or cells that stopped drifting (drift/drift.service.ts). */
export type DriftListener = (
  manager: EntityManager,
  project: EventProject,
  row: EnvironmentRow,
  changes: readonly DriftChange[],
) => Promise<void>;

/** How many rows at most are recomputed for one endpoint when a version of it is made. */
export const RECOMPUTE_ROW_LIMIT = 2_000;

/**
 * The precomputed evidence: per environment row, the distinct exchanges it observed per method +
 * path, and per (row, documented endpoint) the version the row shows, kept up to date inside the
 * transactions that change its inputs (an ingest batch, a new version). Transitions it finds (the
 * version running somewhere changed, a proposal reached a step) are emitted in the same transaction.
 * Its SQL is in evidence.repository.ts; the rows' matrix texts are kept by views/matrix-texts.ts.
 *
 * Concurrency: every writer of a row's cells (and of its matrix text) first locks that environment
 * row (the upsert in `recordBatch`, `FOR UPDATE` in `versionsMade`), so two writers never compute a
 * cell from different snapshots; locks are taken in one order (endpoints, environment rows by id,
 * proposals by id) so writers cannot deadlock.
 */
@Injectable()
export class EvidenceService {
  /** Conformance of one distinct exchange to one version: both are immutable, so this never goes stale. */
  private readonly conformance = new ConformanceCache();
  /** Environment row ids by project, kind and name. */
  private readonly rowIds = new LruCache<string, string>(10_000);

  private readonly cellsChangedListeners: CellsChangedListener[] = [];
  private readonly driftListeners: DriftListener[] = [];

  constructor(
    private readonly repository: EvidenceRepository,
    private readonly notifier: Notifier,
    private readonly shapes: ShapeStore,
    private readonly versions: VersionStore,
  ) {}

  /** Calls `listener` in every transaction that changes cells (ProposalLifecycle adds itself). */
  onCellsChanged(listener: CellsChangedListener): void {
    this.cellsChangedListeners.push(listener);
  }

  /** Calls `listener` in every refresh that finds drifting cells or cells that stopped drifting (DriftService adds itself). */
  onDrift(listener: DriftListener): void {
    this.driftListeners.push(listener);
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
    await this.repository.addExchanges(
      manager,
      project.id,
      await this.rowIdOf(manager, project.id, key),
      exchanges.map(evidenceOf),
    );
    const row = await this.repository.upsertRow(manager, project.id, key, lastSeen);
    const touched = [
      ...new Map(exchanges.map((e) => [`${e.method} ${e.path}`, { method: e.method, path: e.path }])).values(),
    ];
    const endpoints = await this.repository.documentedAmong(manager, project.id, touched);
    if (key.kind === 'production') await this.announceUndocumented(manager, project, row, touched, endpoints);
    if (endpoints.length === 0) return;
    const changed = await this.refreshCells(manager, project, row, endpoints);
    // The matrix text shows versions and drift only: a batch that changed no cell leaves it as is.
    if (changed.length > 0) await matrixTexts.rebuild(manager, project.id, [row.id]);
    await this.cellsChanged(manager, project, [{ row, endpointIds: changed }]);
  }

  /**
   * The version row `rowId`'s cell of each of `endpointIds` shows (its id; null where the cell
   * drifts), in the caller's transaction; an endpoint without a cell there is left out.
   */
  async shownVersions(
    manager: EntityManager,
    rowId: string,
    endpointIds: readonly string[],
  ): Promise<Map<string, string | null>> {
    const cells = await this.repository.cellsOf(manager, rowId, endpointIds);
    return new Map(cells.map((cell) => [cell.endpointId, cell.versionId]));
  }

  /**
   * Regrouping's reads (paths/regroup.service.ts), in its transaction: the id of a project's
   * environment row of one key (kind and name), none when it has no such row.
   */
  async rowIdsOf(
    manager: EntityManager,
    projectId: string,
    key: { kind: MatrixKind; name: string },
  ): Promise<string[]> {
    const id = await this.repository.rowId(manager, projectId, key.kind, key.name);
    return id === null ? [] : [id];
  }

  /**
   * Regrouping's candidates, in its transaction: the paths `pattern` (a LIKE pattern) matches,
   * other than `except`, that rows `rowIds` (every row of the project when null) keep evidence under.
   */
  pathsLike(
    manager: EntityManager,
    projectId: string,
    rowIds: readonly string[] | null,
    pattern: string,
    except: string,
  ): Promise<string[]> {
    return this.repository.pathsLike(manager, projectId, rowIds, pattern, except);
  }

  /**
   * Records which endpoints production traffic reached (each once per project) and emits
   * `endpoints.undocumented` for those reached for the first time that are not documented: one
   * event per batch, naming at most UNDOCUMENTED_NAMED. The insert is the once: a concurrent batch
   * with the same endpoint waits for this transaction and then finds it recorded.
   */
  private async announceUndocumented(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    touched: ReadonlyArray<{ method: string; path: string }>,
    documented: readonly EndpointRef[],
  ): Promise<void> {
    const fresh = await this.repository.firstSightings(manager, project.id, row.kind, touched);
    const known = new Set(documented.map((e) => `${e.method} ${e.path}`));
    const undocumented = fresh
      .filter((e) => !known.has(`${e.method} ${e.path}`))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.method < b.method ? -1 : 1));
    if (undocumented.length === 0) return;
    await this.notifier.emit(manager, project, {
      type: 'endpoints.undocumented',
      environment: { kind: row.kind, name: row.name },
      build: row.build,
      commit: row.commit,
      endpoints: undocumented.slice(0, UNDOCUMENTED_NAMED),
      total: undocumented.length,
    });
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
    const moved = await this.repository.moveExchanges(manager, project.id, rowIds, literals, template);
    if (moved.length === 0) return 0;
    const endpoints = await this.repository.documentedAt(manager, project.id, template);
    if (endpoints.length > 0) {
      // Rows are locked in id order (see the class comment) before their cells are computed.
      const rows = await this.repository.lockRows(
        manager,
        moved.map((m) => m.rowId),
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
    const firstDocumented = await this.repository.firstDocumented(manager, endpointIds);
    const columnsGrew = firstDocumented.length > 0;
    const stalePairs = (): Promise<Array<{ rowId: string; endpointId: string }>> =>
      this.repository.stalePairs(manager, project.id, endpointIds, RECOMPUTE_ROW_LIMIT);
    let rows: EnvironmentRow[];
    let pairs: Array<{ rowId: string; endpointId: string }>;
    if (columnsGrew) {
      // Every row of the project, locked before its evidence is read: a batch that recorded
      // exchanges of the new endpoint and committed while we waited is seen.
      rows = await this.repository.lockProjectRows(manager, project.id);
      pairs = await stalePairs();
    } else {
      pairs = await stalePairs();
      if (pairs.length === 0) return;
      rows = await this.repository.lockRows(manager, [...new Set(pairs.map((pair) => pair.rowId))]);
    }
    const endpoints = await this.repository.endpointsByIds(manager, [...new Set(pairs.map((p) => p.endpointId))]);
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
    const created = await this.repository.insertRow(manager, projectId, key);
    // Not cached: this transaction may still roll back.
    if (created !== null) return created;
    const existing = await this.repository.rowId(manager, projectId, key.kind, key.name);
    if (existing === null) throw new Error(`environment row ${key.kind} ${key.name} neither inserted nor found`);
    this.rowIds.set(cacheKey, existing);
    return existing;
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
    const versions = await this.repository.candidateVersions(manager, endpointIds);
    const evidence = await this.repository.exchangesOf(manager, row.id, endpoints);
    const before = await this.repository.cellsOf(manager, row.id, endpointIds);
    // Shapes and versions read through the transaction: a batch's new shapes and a version made in it are not committed yet.
    const shapes = await this.shapes.load(
      evidence.flatMap((e) => [e.requestShape, e.responseShape]).filter((fp): fp is string => fp !== null),
      manager,
    );
    const documented = await this.versions.load(
      versions.map((v) => v.id),
      manager,
    );
    const conforms = (versionId: string, exchange: StoredExchange): boolean =>
      this.conformance.conforms(versionId, documented.get(versionId), exchange, shapes);

    const previous = new Map(before.map((cell) => [cell.endpointId, cell]));
    const cells: NewCell[] = [];
    for (const endpoint of endpoints) {
      const seen = evidence.filter((e) => e.method === endpoint.method && e.path === endpoint.path);
      const candidates = versions.filter((v) => v.endpointId === endpoint.id);
      if (seen.length === 0 || candidates.length === 0) continue;
      const lastSeen = new Date(Math.max(...seen.map((e) => new Date(e.lastSeen).getTime()))).toISOString();
      cells.push({ endpointId: endpoint.id, ...evaluateCell(candidates, seen, conforms), lastSeen });
    }
    if (cells.length === 0) return [];
    await this.repository.writeCells(manager, row.id, cells);
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
    if (this.driftListeners.length > 0) {
      const drift = this.driftChanges(cells, previous, endpoints, evidence, versions, conforms);
      if (drift.length > 0) for (const listener of this.driftListeners) await listener(manager, project, row, drift);
    }
    return changed.map((cell) => cell.endpointId);
  }

  /** The refreshed cells that drift (with the exchanges that do not conform to their nearest version) or stopped drifting. */
  private driftChanges(
    cells: readonly NewCell[],
    previous: ReadonlyMap<string, { drift: boolean }>,
    endpoints: readonly EndpointRef[],
    evidence: readonly StoredExchange[],
    versions: ReadonlyArray<{ id: string; endpointId: string; major: number; minor: number }>,
    conforms: (versionId: string, exchange: StoredExchange) => boolean,
  ): DriftChange[] {
    const changes: DriftChange[] = [];
    for (const cell of cells) {
      const before = previous.get(cell.endpointId)?.drift ?? false;
      if (!cell.drift && !before) continue;
      const endpoint = endpoints.find((e) => e.id === cell.endpointId) as EndpointRef;
      const nearest = versions.find((v) => v.endpointId === endpoint.id && formatVersion(v) === cell.version);
      const exchanges = cell.drift
        ? evidence.filter(
            (e) =>
              e.method === endpoint.method &&
              e.path === endpoint.path &&
              (nearest === undefined || !conforms(nearest.id, e)),
          )
        : [];
      changes.push({ endpoint, version: cell.version, drift: cell.drift, appeared: cell.drift && !before, exchanges });
    }
    return changes;
  }

  /**
   * "What runs there now" per (kind, scope, endpoint) follows the newest row (by first evidence)
   * that saw the endpoint, so traffic trickling in from an older build does not move it back.
   */
  private async moveCurrent(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    cells: readonly NewCell[],
    endpoints: readonly EndpointRef[],
  ): Promise<void> {
    const current = await this.repository.lockCurrent(
      manager,
      project.id,
      row,
      cells.map((cell) => cell.endpointId),
    );
    const byEndpoint = new Map(current.map((c) => [c.endpointId, c]));
    const moves = cells.filter((cell) => {
      const now = byEndpoint.get(cell.endpointId);
      return now === undefined || now.rowId === row.id || now.rowFirstSeen.getTime() <= row.firstSeen.getTime();
    });
    if (moves.length === 0) return;
    await this.repository.writeCurrent(manager, project.id, row, moves);
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
        breaking: majorRaised(before?.version ?? null, cell.version),
      });
    }
  }
}
