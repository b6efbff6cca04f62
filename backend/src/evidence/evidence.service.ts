import { Injectable } from '@nestjs/common';
import {
  type AgentEnvironment,
  formatVersion,
  isDocumentableHeader,
  type MatrixKind,
  REMOVED_STATUSES,
} from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import type { QueuedEvidence } from '../captures/batch-statement';
import { ConformanceCache } from '../captures/conformance';
import type { ObservationRow } from '../captures/observed-shapes';
import { ShapeStore } from '../captures/shape-store';
import { LruCache } from '../common/lru-cache';
import { VersionStore } from '../versions/version-store';
import type { EndpointRef } from '../versions/versions.repository';
import { matrixTexts } from '../views/matrix-texts';
import { type EventProject, Notifier } from '../webhooks/notifier';
import { type TransitionEvent, UNDOCUMENTED_NAMED } from '../webhooks/transition-events';
import { evaluateCell } from './cell';
import { environmentRowOf, type EnvironmentRowKey } from './environment-row';
import { packedTable } from './queued-payload';
import {
  type EnvironmentRow,
  EvidenceRepository,
  type EvidenceExchangeRow,
  type FoldedExchangeRow,
  type NewCell,
  type QueuedBatch,
  type RemovalEvidence,
  type StoredExchange,
} from './evidence.repository';

export type { EnvironmentRow, RemovalEvidence } from './evidence.repository';

/** One aggregated exchange of an ingest batch (the fields of the ingest service's aggregated rows). */
export interface BatchExchange extends Omit<EvidenceExchangeRow, 'query' | 'req_h'> {
  /** Query parameter and request header names (absent: not known, then parameters are not compared). */
  query?: string[];
  req_h?: string[];
}

/** The fields evidence keeps of an exchange, in their packed order (`packList`'s first element). */
const EXCHANGE_FIELDS: ReadonlyArray<keyof EvidenceExchangeRow> = [
  'method',
  'path',
  'status',
  'req_ct',
  'req_fp',
  'res_ct',
  'res_fp',
  'count',
  'last_seen',
  'query',
  'req_h',
];

/**
 * A batch's exchanges as evidence keeps them (`EvidenceExchangeRow`: their key, count, last seen,
 * and only the header names worth documenting), packed as `evidence_queue` stores them: `packList`'s
 * JSON text of those rows, equal to it byte for byte, each exchange's values put in their array
 * at once (issue 20: a row object per exchange, then an array from it, allocated 26 KB and took
 * twice the time for the scale bench's 40-row batch).
 */
export function packedExchanges(exchanges: readonly BatchExchange[]): string {
  return packedTable(EXCHANGE_FIELDS, exchanges, (e) => [
    e.method,
    e.path,
    e.status,
    e.req_ct,
    e.req_fp,
    e.res_ct,
    e.res_fp,
    e.count,
    e.last_seen,
    e.query ?? null,
    e.req_h?.filter(isDocumentableHeader) ?? null,
  ]);
}

/** Whether `version` is a higher major version than `previous` (both `major.minor`): a breaking change. */
export function majorRaised(previous: string | null, version: string): boolean {
  const major = (text: string): number => Number.parseInt(text.split('.')[0] ?? '', 10);
  return previous !== null && major(version) > major(previous);
}

/** The key of a distinct exchange (NUL cannot occur in a validated method, path, media type or fingerprint). */
function exchangeKey(e: Omit<ObservationRow, 'count'>): string {
  return [
    e.method,
    e.path,
    e.status,
    e.requestContentType ?? ' ',
    e.requestShape ?? ' ',
    e.responseContentType ?? ' ',
    e.responseShape ?? ' ',
  ].join('\u0000');
}

/** The key of an exchange about to be added, as `exchangeKey` makes it of a stored one. */
function incomingKey(e: EvidenceExchangeRow): string {
  return exchangeKey({
    method: e.method,
    path: e.path,
    status: e.status,
    requestContentType: e.req_ct,
    requestShape: e.req_fp,
    responseContentType: e.res_ct,
    responseShape: e.res_fp,
  });
}

/** Whether adding `incoming` names to `stored` ones changes them (null: not known, which adds nothing). */
function namesGrow(stored: readonly string[] | null, incoming: readonly string[] | null): boolean {
  if (incoming === null) return false;
  if (stored === null) return true;
  const known = new Set(stored);
  return incoming.some((name) => !known.has(name));
}

/** The names of two folded exchanges united (sorted); an unknown (null) side leaves the other as it is. */
function unitedNames(a: string[] | null, b: string[] | null): string[] | null {
  if (a === null) return b;
  if (b === null) return a;
  return [...new Set([...a, ...b])].sort();
}

/**
 * The exchanges of several batches (oldest first) folded by exchange key, as adding them one by
 * one would store them: counts added, last seen the latest, name lists united; the commit and
 * build the first batch that had each (what a row new to it keeps as where it came from). Added a
 * batch at a time (`add`), as a fold reads them.
 */
export class ExchangeFold {
  private readonly folded = new Map<string, FoldedExchangeRow>();

  add(batch: Pick<QueuedBatch, 'exchanges' | 'commit' | 'build'>): void {
    for (const e of batch.exchanges) {
      const key = incomingKey(e);
      const before = this.folded.get(key);
      if (before === undefined) {
        this.folded.set(key, { ...e, commit: batch.commit, build: batch.build });
        continue;
      }
      before.count += e.count;
      if (Date.parse(e.last_seen) > Date.parse(before.last_seen)) before.last_seen = e.last_seen;
      before.query = unitedNames(before.query, e.query);
      before.req_h = unitedNames(before.req_h, e.req_h);
    }
  }

  /** The exchanges added so far, one a key, in the order their keys first came. */
  exchanges(): FoldedExchangeRow[] {
    return [...this.folded.values()];
  }
}

/**
 * What a fold makes of "what runs there now": its refreshed cells (with their endpoints), which
 * can move it to the row, and the last seen of the endpoints whose cells it only touched.
 */
interface LateCurrent {
  cells: NewCell[];
  endpoints: EndpointRef[];
  touched: Array<{ endpointId: string; lastSeen: string }>;
}

/** Batches folded at most in one fold transaction. */
export const FOLD_LIMIT = 500;
/**
 * What one fold transaction takes at most of the queue's stored payloads (`pg_column_size`,
 * compressed), whatever the batches' sizes: what a fold holds in memory stays bounded when folds
 * gather many batches (ingest/evidence-folder.ts, GATHER_MS). One batch is always taken.
 */
export const FOLD_BYTES = 4 * 1024 * 1024;

/**
 * A fold's runtime minutes and consumer days (the ingest queues them with the evidence): told each
 * batch the fold takes, as it reads it (`add`, folded at once); `write` writes their sums later in
 * the fold's transaction. A new one for every fold.
 */
export type QueuedFoldListener = () => {
  add(batch: Pick<QueuedBatch, 'minutes' | 'consumers'>): void;
  write(manager: EntityManager, row: EnvironmentRow): Promise<void>;
};

/**
 * How long a fold's JavaScript runs at most before it lets the replica's other work run (ms). A
 * fold reads and folds every batch it took (up to FOLD_LIMIT, hundreds under load); done in one
 * go, a fold of 300–435 batches held the replica's event loop for 3.3–4.0 s on a loaded machine at
 * full size (issue 20, session 29; some 0.2 s quiet, at 15–17 ms per 1,000 rows), and every agent
 * message and acknowledgement of that replica waited meanwhile.
 */
export const FOLD_SLICE_MS = 10;

/**
 * What a fold keeps of the batches it took, made at the take: their exchanges folded by key, the
 * write of their runtime minutes and consumer days (`alsoFold`), and the few fields it reads
 * besides. Each batch's lists are unpacked here and folded at once, and the batch let go of
 * (`taken` is emptied): nothing refers to them after (issue 20: the batches of a fold lived
 * through its whole transaction, see `TakenBatch`). Every FOLD_SLICE_MS it lets the event loop run.
 */
async function foldedBatches(
  taken: QueuedBatch[],
  alsoFold: QueuedFoldListener,
): Promise<{
  count: number;
  lastSeen: string;
  build: string | null;
  commit: string | null;
  exchanges: FoldedExchangeRow[];
  writeAlso: ReturnType<QueuedFoldListener>['write'];
}> {
  const count = taken.length;
  const exchanges = new ExchangeFold();
  const also = alsoFold();
  let lastSeen = taken[0]?.lastSeen as string;
  let build: string | null = null;
  let commit: string | null = null;
  let slice = performance.now();
  for (let batch = taken.shift(); batch !== undefined; batch = taken.shift()) {
    if (Date.parse(batch.lastSeen) > Date.parse(lastSeen)) lastSeen = batch.lastSeen;
    build = batch.build ?? build;
    commit = batch.commit ?? commit;
    exchanges.add(batch);
    also.add(batch);
    if (taken.length > 0 && performance.now() - slice >= FOLD_SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
  return {
    count,
    lastSeen,
    build,
    commit,
    exchanges: exchanges.exchanges(),
    writeAlso: (manager, row) => also.write(manager, row),
  };
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
 * Told in the transaction of every fold that added exchanges to a row, after its cells: the
 * proposals' lifecycle looks for removals the row shows (a removed endpoint's cell never changes,
 * so `CellsChangedListener` would not tell). It runs on every such fold, so it must be cheap.
 */
export type FoldedListener = (manager: EntityManager, project: EventProject, row: EnvironmentRow) => Promise<void>;

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
 * transactions that change its inputs (a fold of queued ingest batches, a new version, a
 * regrouping). An ingest batch only queues its evidence (`queuedEvidence`, written by the batch statement); folds take a row's queued
 * batches, many at once, on any replica (`foldQueued`). Transitions it finds (the
 * version running somewhere changed, a proposal reached a step) are emitted in the same transaction.
 * Its SQL is in evidence.repository.ts; the rows' matrix texts are kept by views/matrix-texts.ts.
 *
 * Concurrency: every writer of a row's cells (and of its matrix text) first locks that environment
 * row (`FOR NO KEY UPDATE SKIP LOCKED` in `foldQueued`, `FOR NO KEY UPDATE` in `versionsMade` and
 * `regroup`: batches queuing for the row, whose foreign key takes `FOR KEY SHARE`, are not held
 * up), before anything else of the evidence, so two writers never compute a cell from different
 * snapshots; locks are taken in one order (endpoints, environment rows by id, proposals by id) so
 * writers cannot deadlock.
 */
@Injectable()
export class EvidenceService {
  /** Conformance of one distinct exchange to one version: both are immutable, so this never goes stale. */
  private readonly conformance = new ConformanceCache();
  /** Environment row ids by project, kind and name. */
  private readonly rowIds = new LruCache<string, string>(10_000);

  private readonly cellsChangedListeners: CellsChangedListener[] = [];
  private readonly driftListeners: DriftListener[] = [];
  private readonly foldedListeners: FoldedListener[] = [];

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

  /** Calls `listener` in every fold that adds exchanges to a row (ProposalLifecycle adds itself). */
  onFolded(listener: FoldedListener): void {
    this.foldedListeners.push(listener);
  }

  /** Calls `listener` in every refresh that finds drifting cells or cells that stopped drifting (DriftService adds itself). */
  onDrift(listener: DriftListener): void {
    this.driftListeners.push(listener);
  }

  private async cellsChanged(manager: EntityManager, project: EventProject, changes: CellChanges): Promise<void> {
    for (const listener of this.cellsChangedListeners) await listener(manager, project, changes);
  }

  /**
   * The ingest hook: a batch's evidence as the batch statement queues it (`QueuedEvidence`, see
   * WRITE_BATCH) for its environment row, created when new (committed on its own, before the
   * batch: the first batches of many agents of a new build, sent at once, then wait for this short
   * insert — inserting a key another transaction is inserting waits for that transaction — not for
   * the first batch's whole statement; issue 20: 54 waits over 100 ms at the scale bench's start).
   * Nothing the queue's insert does locks a row another batch writes: agents of one build do not
   * queue behind each other. The evidence is folded in by `foldQueued`, on any replica. A batch
   * that then fails leaves the row without evidence until it is resent; so does one whose every
   * row is past its capture's cap of endpoints. The runtime minutes and consumer days come packed
   * (`packedRuntimeMinutes`, `packedConsumerDays`: made in the list's layout, never as objects).
   * @returns null when the batch is no evidence (`local` captures, or nothing in it).
   */
  async queuedEvidence(
    projectId: string,
    environment: AgentEnvironment,
    exchanges: readonly BatchExchange[],
    packedMinutes: string,
    packedConsumers: string,
  ): Promise<QueuedEvidence | null> {
    const key = environmentRowOf(environment);
    if (key === null || (exchanges.length === 0 && packedMinutes === '[]')) return null;
    const rowId = await this.rowIdOf(projectId, key);
    return {
      rowId,
      build: key.build,
      commit: key.commit,
      exchanges: packedExchanges(exchanges),
      minutes: packedMinutes,
      consumers: packedConsumers,
    };
  }

  /**
   * Folds up to `FOLD_LIMIT` of a row's queued batches (and `FOLD_BYTES` of their payloads) into its evidence, in one transaction that
   * holds the row's lock (taken `SKIP LOCKED`: `'busy'` when another fold, a regrouping or new
   * versions hold it): the exchanges folded by key and added, the row touched, the cells of the
   * documented endpoints they touched refreshed (with their matrix text and transitions),
   * `alsoFold` told the batches' runtime minutes and consumer days, and last the proposals' steps
   * the cells reach (`onCellsChanged`, `onFolded`), in the same transaction. Each batch is
   * folded once: it is deleted from the queue in the transaction that folds it. `transaction` runs
   * it (by default on the app's pool; the folder gives folds a pool of their own).
   * @returns how many batches were folded, and whether a bound left some of those queued before it.
   */
  foldQueued(
    project: EventProject,
    rowId: string,
    alsoFold: QueuedFoldListener,
    transaction: <T>(work: (manager: EntityManager) => Promise<T>) => Promise<T> = (work) =>
      this.repository.transaction(work),
  ): Promise<{ folded: number; left: boolean } | 'busy'> {
    return transaction(async (manager) => {
      const locked = await this.repository.lockRowIfFree(manager, rowId);
      if (locked === null || locked === 'busy') return locked === null ? { folded: 0, left: false } : 'busy';
      // Folded where they are taken (not in a local of this function, which lives through its awaits).
      const taken = await this.repository
        .takeQueued(manager, project.id, rowId, FOLD_LIMIT, FOLD_BYTES)
        .then(async (queued) =>
          queued.batches.length === 0
            ? null
            : { left: queued.left, ...(await foldedBatches(queued.batches, alsoFold)) },
        );
      if (taken === null) return { folded: 0, left: false };
      const { count, left, lastSeen, build, commit, exchanges, writeAlso } = taken;
      const row = await this.repository.touchRow(manager, rowId, lastSeen, build, commit);
      /** The endpoints whose cells the fold changed (null: it refreshed none). */
      let changed: string[] | null = null;
      /** What the fold makes of "what runs there now", written at its end (see below). */
      const current: LateCurrent = { cells: [], endpoints: [], touched: [] };
      let keys: Array<{ method: string; path: string }> = [];
      let endpoints: EndpointRef[] = [];
      if (exchanges.length > 0) {
        keys = [
          ...new Map(exchanges.map((e) => [`${e.method} ${e.path}`, { method: e.method, path: e.path }])).values(),
        ];
        endpoints = await this.versions.documentedAmong(project.id, keys, manager);
        const stale = await this.cellsToCompute(manager, rowId, endpoints, exchanges);
        await this.repository.addExchanges(manager, project.id, rowId, exchanges);
        changed = await this.refreshRow(
          manager,
          project,
          row,
          endpoints.filter((e) => stale.has(e.id)),
          current,
        );
        // The other cells keep their values: only their last seen moves.
        const newest = new Map<string, string>();
        for (const e of exchanges) {
          const before = newest.get(`${e.method} ${e.path}`);
          if (before === undefined || Date.parse(e.last_seen) > Date.parse(before))
            newest.set(`${e.method} ${e.path}`, e.last_seen);
        }
        current.touched = endpoints
          .filter((e) => !stale.has(e.id))
          .map((e) => ({ endpointId: e.id, lastSeen: newest.get(`${e.method} ${e.path}`) as string }));
        await this.repository.touchCells(manager, rowId, current.touched);
      }
      await writeAlso(manager, row);
      // Last, what other rows' folds also write: the first sightings of endpoints in production,
      // "what runs there now" in the row's kind and scope, then the proposals' steps. Each locks a
      // row another fold of the same kind can need (two production builds during a rollout; two
      // rows reaching steps of one proposal) until this commits, so none is taken before the
      // runtime minutes and consumer days, most of a fold (issue 20: the proposals' 179 ms wait).
      if (exchanges.length > 0) {
        if (row.kind === 'production') await this.announceUndocumented(manager, project, row, keys, endpoints);
        await this.moveCurrent(manager, project, row, current);
        if (changed !== null) await this.cellsChanged(manager, project, [{ row, endpointIds: changed }]);
        for (const listener of this.foldedListeners) await listener(manager, project, row);
      }
      return { folded: count, left };
    });
  }

  /** Whether any of row `rowId`'s queued batches up to `upTo` (an `evidence_queue` id) is not folded yet. */
  anyQueued(projectId: string, rowId: string, upTo: string): Promise<boolean> {
    return this.repository.queuedUpTo(projectId, rowId, upTo);
  }

  /** The id of row `rowId`'s last queued batch, null when none is queued. */
  lastQueued(projectId: string, rowId: string): Promise<string | null> {
    return this.repository.lastQueued(projectId, rowId);
  }

  /**
   * The id of the environment row an agent environment's evidence goes to, null when it has none
   * (`local`, or a row no batch made yet): a capture's end waits for that row's folds.
   */
  async existingRowIdOf(projectId: string, environment: AgentEnvironment): Promise<string | null> {
    const key = environmentRowOf(environment);
    if (key === null) return null;
    const cached = this.rowIds.get(rowCacheKey(projectId, key));
    if (cached !== undefined) return cached;
    return this.repository.rowId(this.repository.pool, projectId, key.kind, key.name);
  }

  /** Rows (with their project) whose batches have been queued for more than `seconds`, at most `limit`. */
  queuedRows(seconds: number, limit: number): Promise<Array<{ projectId: string; slug: string; rowId: string }>> {
    return this.repository.queuedRows(seconds, limit);
  }

  /**
   * The documented endpoints among `endpoints` whose cell in row `rowId` the exchanges about to be
   * added can change: a cell shows the lowest version every distinct exchange conforms to, so
   * counts alone change it only where it drifts (the nearest version is the one most traffic
   * conforms to). The others' cells keep their values when no new distinct exchange and no new
   * query parameter or documentable header name arrives. Read before the exchanges are added.
   */
  private async cellsToCompute(
    manager: EntityManager,
    rowId: string,
    endpoints: readonly EndpointRef[],
    exchanges: readonly EvidenceExchangeRow[],
  ): Promise<Set<string>> {
    if (endpoints.length === 0) return new Set();
    const cells = new Map(
      (
        await this.repository.cellsOf(
          manager,
          rowId,
          endpoints.map((e) => e.id),
        )
      ).map((cell) => [cell.endpointId, cell]),
    );
    const stored = new Map<string, StoredExchange>();
    for (const e of await this.repository.exchangesOf(manager, rowId, endpoints)) stored.set(exchangeKey(e), e);
    const grown = new Set<string>();
    for (const e of exchanges) {
      const before = stored.get(incomingKey(e));
      if (
        before === undefined ||
        namesGrow(before.query ?? null, e.query) ||
        namesGrow(before.requestHeaders ?? null, e.req_h)
      )
        grown.add(`${e.method} ${e.path}`);
    }
    return new Set(
      endpoints
        .filter((e) => {
          const cell = cells.get(e.id);
          return cell === undefined || cell.drift || grown.has(`${e.method} ${e.path}`);
        })
        .map((e) => e.id),
    );
  }

  /**
   * Refreshes a locked row's cells of some documented endpoints, with its matrix text.
   * @returns the endpoints whose cells changed (for the steps, `cellsChanged`), null when there were none to refresh.
   */
  private async refreshRow(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    endpoints: readonly EndpointRef[],
    current: LateCurrent,
  ): Promise<string[] | null> {
    if (endpoints.length === 0) return null;
    const changed = await this.refreshCells(manager, project, row, endpoints, current);
    // The matrix text shows versions and drift only: a fold that changed no cell leaves it as is.
    await matrixTexts.patch(manager, project.id, row.id, changed);
    return changed;
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
   * What row `rowId` shows of the removal of `endpoints`, in the caller's transaction: all the calls
   * it has evidence of, and those of the endpoints answered with another status than 404, 405 or 410.
   */
  removalEvidence(
    manager: EntityManager,
    rowId: string,
    endpoints: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<RemovalEvidence> {
    return this.repository.removalEvidence(manager, rowId, endpoints, REMOVED_STATUSES);
  }

  /**
   * The newest row of a kind first seen after `since` (a removal's approval) with what it shows of
   * the removal of `endpoints`; null when no row of that kind was first seen since.
   */
  async removalSince(
    projectId: string,
    kind: MatrixKind,
    since: Date,
    endpoints: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<{ row: EnvironmentRow; evidence: RemovalEvidence } | null> {
    const row = await this.repository.newestRowSince(this.repository.pool, projectId, kind, since);
    if (row === null) return null;
    return {
      row,
      evidence: await this.repository.removalEvidence(this.repository.pool, row.id, endpoints, REMOVED_STATUSES),
    };
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
   * united; an unknown list leaves the other as it is, as in `foldQueued`), and refreshes those
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
    // The rows first, in id order (see the class comment): no fold runs on them until this
    // commits, and the batches queued for them name the template from now on.
    const locked =
      rowIds === null
        ? await this.repository.lockProjectRows(manager, project.id)
        : await this.repository.lockRows(manager, rowIds);
    await this.repository.renameQueuedPaths(manager, project.id, rowIds, literals, template);
    const moved = await this.repository.moveExchanges(manager, project.id, rowIds, literals, template);
    if (moved.length === 0) return 0;
    const endpoints = await this.versions.documentedAt(project.id, template, manager);
    if (endpoints.length > 0) {
      const movedRows = new Set(moved.map((m) => m.rowId));
      const rows = locked.filter((row) => movedRows.has(row.id));
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
    const firstDocumented = await this.versions.firstDocumented(endpointIds, manager);
    const columnsGrew = firstDocumented.length > 0;
    const endpoints = await this.versions.endpointsByIds(project.id, endpointIds, manager);
    const stalePairs = (): Promise<Array<{ rowId: string; endpointId: string }>> =>
      this.repository.stalePairs(manager, project.id, endpoints, RECOMPUTE_ROW_LIMIT);
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
   * The id of the row, created when new (committed on its own: it locks only a new row). Read
   * first: inserting a key that exists waits for any transaction that updated its row (a fold),
   * which reading does not. Ids are cached: rows are only ever removed with their project, and the
   * key names the project.
   */
  private async rowIdOf(projectId: string, key: EnvironmentRowKey): Promise<string> {
    const cacheKey = rowCacheKey(projectId, key);
    const cached = this.rowIds.get(cacheKey);
    if (cached !== undefined) return cached;
    const pool = this.repository.pool;
    const id =
      (await this.repository.rowId(pool, projectId, key.kind, key.name)) ??
      (await this.repository.insertRow(pool, projectId, key)) ??
      (await this.repository.rowId(pool, projectId, key.kind, key.name));
    if (id === null) throw new Error(`environment row ${key.kind} ${key.name} neither inserted nor found`);
    this.rowIds.set(cacheKey, id);
    return id;
  }

  /**
   * Recomputes one row's cells of some endpoints from its evidence, writes them, moves "what runs
   * there now" when this row is the newest of its scope, and emits `version.changed` for every
   * change there; with `later`, the cells that can move it are added there instead, for the caller
   * to move it with (`moveCurrent`) when it chooses. Returns the endpoints whose cell changed.
   */
  private async refreshCells(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    endpoints: readonly EndpointRef[],
    later?: LateCurrent,
  ): Promise<string[]> {
    if (endpoints.length === 0) return [];
    const endpointIds = endpoints.map((e) => e.id);
    // One connection per transaction: these run one after the other.
    const versions = await this.versions.versionsOf(endpointIds, manager);
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
    if (later === undefined)
      await this.moveCurrent(manager, project, row, { cells, endpoints: [...endpoints], touched: [] });
    else {
      later.cells.push(...cells);
      later.endpoints.push(...endpoints);
    }
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
   * Moves it to `row`'s refreshed cells where the row is the newest, and moves the last seen of
   * the touched endpoints where it is already the row's; every row it writes is locked first, in
   * endpoint order, so folds of two rows of one scope cannot deadlock.
   */
  private async moveCurrent(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    work: LateCurrent,
  ): Promise<void> {
    const { cells, endpoints, touched } = work;
    if (cells.length === 0 && touched.length === 0) return;
    const current = await this.repository.lockCurrent(
      manager,
      project.id,
      row,
      cells.map((cell) => cell.endpointId),
      touched.map((t) => t.endpointId),
    );
    const owned = new Set(current.filter((c) => c.rowId === row.id).map((c) => c.endpointId));
    await this.repository.touchCurrent(
      manager,
      project.id,
      row,
      touched.filter((t) => owned.has(t.endpointId)),
    );
    const byEndpoint = new Map(current.map((c) => [c.endpointId, c]));
    const moves = cells.filter((cell) => {
      const now = byEndpoint.get(cell.endpointId);
      return now === undefined || now.rowId === row.id || now.rowFirstSeen.getTime() <= row.firstSeen.getTime();
    });
    if (moves.length === 0) return;
    await this.repository.writeCurrent(manager, project.id, row, moves);
    const names = new Map(endpoints.map((e) => [e.id, e]));
    const changes: TransitionEvent[] = [];
    for (const cell of moves) {
      const before = byEndpoint.get(cell.endpointId);
      if (before !== undefined && before.version === cell.version && before.drift === cell.drift) continue;
      const endpoint = names.get(cell.endpointId) as EndpointRef;
      changes.push({
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
    // One statement for all of them: a new build's first fold changes every endpoint it saw.
    await this.notifier.emitAll(manager, project, changes);
  }
}

/** Where `rowIds` keeps a project's environment row's id. */
function rowCacheKey(projectId: string, key: EnvironmentRowKey): string {
  return `${projectId}\u0000${key.kind}\u0000${key.name}`;
}
