import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type BatchMessage,
  type CellRuntime,
  type EndpointRuntimeFigures,
  histogramBucketValue,
  LatencyHistogram,
  type LatencyPercentiles,
  type MatrixKind,
  type RuntimePoint,
  type RuntimeResponse,
  type VersionShare,
  type VersionSharePoint,
  type VersionShareResponse,
  type WireHistogram,
} from '@spectator/shared';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';
import { pullRequestRowName } from '../evidence/environment-row';
import { packedTable } from '../evidence/queued-payload';
import type { FoldedLists } from '../common/folded-lists';
import { RUNTIME_ROWS } from '../partitions/partitions';
import { PartitionsRepository } from '../partitions/partitions.repository';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import {
  addCounts,
  emptySums,
  type RuntimeCellRow,
  type RuntimeMinute,
  RuntimeRepository,
  type RuntimeResolution,
  type RuntimeStepRow,
  type RuntimeSums,
} from './runtime.repository';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** How often each replica deletes runtime rows past their retention. */
const ROLLUP_INTERVAL_MS = 10 * MINUTE_MS;
/** Rows deleted per statement, so a backlog never makes one long transaction. */
const ROLLUP_CHUNK = 10_000;
const RESOLUTIONS: readonly RuntimeResolution[] = ['minute', 'hour', 'day'];
/** Points a series may have at most (the step grows to keep under it). */
export const MAX_RUNTIME_POINTS = 1_500;
const STEPS: ReadonlyArray<{ name: RuntimeResolution; ms: number }> = [
  { name: 'minute', ms: MINUTE_MS },
  { name: 'hour', ms: HOUR_MS },
  { name: 'day', ms: DAY_MS },
];

/** The fields of a packed runtime minute, `method` and `path` first (evidence/queued-payload.ts). */
const RUNTIME_MINUTE_FIELDS: ReadonlyArray<keyof RuntimeMinute> = [
  'method',
  'path',
  'minute',
  'requests',
  'serverErrors',
  'upstreamFailures',
  'clientLeft',
  'ttfb',
  'ttlb',
];

/**
 * A batch's runtime evidence folded per endpoint (method, path) and minute (of each row's last
 * seen): every exchange counted, 5xx and the agent's answers for a failed upstream as server errors,
 * time to first and last byte merged. Rows of agents that send no timings count their exchanges
 * only. The batch statement queues them without the endpoints the capture did not keep (past its
 * cap of endpoints), as it does the evidence (WRITE_BATCH).
 *
 * Made packed, as `evidence_queue` keeps them (`packList`'s JSON text of `RuntimeMinute`s, equal to
 * it byte for byte), each minute's values put in its array at once (issue 20: an object per
 * minute, then an array from each, allocated about 8 KB more for the scale bench's 40-row batch).
 */
export function packedRuntimeMinutes(batch: BatchMessage): string {
  const folded = new Map<string, MinuteSums>();
  // A batch's rows mostly share a few minutes: each minute's text is made once.
  const minutes = new Map<number, string>();
  const sumsOf = (method: string, path: string, at: string): MinuteSums => {
    const ms = Date.parse(at);
    const start = ms - (((ms % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    let minute = minutes.get(start);
    if (minute === undefined) minutes.set(start, (minute = new Date(start).toISOString()));
    const key = `${method} ${path} ${minute}`;
    let entry = folded.get(key);
    if (entry === undefined)
      folded.set(
        key,
        (entry = {
          method,
          path,
          minute,
          requests: 0,
          serverErrors: 0,
          upstreamFailures: 0,
          clientLeft: 0,
          ttfb: [],
          ttlb: [],
        }),
      );
    return entry;
  };
  for (const o of batch.observations) {
    const sums = sumsOf(o.method, o.path, o.lastSeen);
    sums.requests += o.count;
    if (o.status >= 500) sums.serverErrors += o.count;
    if (o.runtime) {
      sums.ttfb.push(o.runtime.ttfb);
      sums.ttlb.push(o.runtime.ttlb);
      sums.clientLeft += o.runtime.clientLeft ?? 0;
    }
  }
  for (const f of batch.failures ?? []) {
    const sums = sumsOf(f.method, f.path, f.lastSeen);
    sums.requests += f.count;
    if (f.status === 0) sums.clientLeft += f.count;
    else {
      sums.serverErrors += f.count;
      sums.upstreamFailures += f.count;
    }
  }
  return packedTable(RUNTIME_MINUTE_FIELDS, folded.values(), (m) => [
    m.method,
    m.path,
    m.minute,
    m.requests,
    m.serverErrors,
    m.upstreamFailures,
    m.clientLeft,
    mergedWire(m.ttfb),
    mergedWire(m.ttlb),
  ]);
}

/** A minute's sums while a batch is folded: the histograms as sent, merged once at the end. */
interface MinuteSums extends Omit<RuntimeMinute, 'ttfb' | 'ttlb'> {
  ttfb: WireHistogram[];
  ttlb: WireHistogram[];
}

/**
 * Histograms in wire form merged: one (most rows are an endpoint's only row of their minute in a
 * batch) is kept as validated, without building and reading back 149 buckets; the fold adds it.
 */
function mergedWire(wires: readonly WireHistogram[]): WireHistogram {
  if (wires.length === 0) return {};
  if (wires.length === 1) return wires[0] as WireHistogram;
  const merged = new LatencyHistogram();
  for (const wire of wires) merged.addWire(wire);
  return merged.toWire();
}

/** Milliseconds as answered: to the microsecond (the histograms are within 8.6 % anyway). */
const toMicros = (ms: number): number => Math.round(ms * 1000) / 1000;

/** A key's minutes while a fold adds them up (`foldedMinutes`): the first as it came, the sums once a second came. */
class SummedMinute {
  readonly sums = emptySums();

  constructor(readonly first: RuntimeMinute) {
    this.add(first);
  }

  add(m: RuntimeMinute): void {
    addCounts(this.sums, m);
    this.sums.ttfb.addWire(m.ttfb);
    this.sums.ttlb.addWire(m.ttlb);
  }
}

/**
 * A fold's minutes, one per endpoint and minute (each is a row waiting for the roll-up): the
 * minutes of several batches of one key added up, counts added and histograms merged. A key of
 * one batch only (the most common) is kept as it came. The minute, hour and day rows are rolled
 * up from these later (`RuntimeService.rollUpMinutes`). Added up as they come, a batch's list at
 * a time (`add`): a fold unpacks each batch's list when its turn comes (issue 20: a fold's 28–60
 * batches' minutes as objects at once were what its young-generation collections copied), and
 * keeps only one minute a key.
 */
export class MinutesFold {
  private readonly byKey = new Map<string, RuntimeMinute | SummedMinute>();

  add(minutes: Iterable<RuntimeMinute>): void {
    for (const m of minutes) {
      const key = `${m.method} ${m.path} ${m.minute}`;
      const before = this.byKey.get(key);
      if (before === undefined) this.byKey.set(key, m);
      else if (before instanceof SummedMinute) before.add(m);
      else {
        const summed = new SummedMinute(before);
        summed.add(m);
        this.byKey.set(key, summed);
      }
    }
  }

  /** The minutes added so far, one a key. */
  minutes(): RuntimeMinute[] {
    return [...this.byKey.values()].map((folded) => {
      if (!(folded instanceof SummedMinute)) return folded;
      const { first, sums } = folded;
      return {
        method: first.method,
        path: first.path,
        minute: first.minute,
        requests: sums.requests,
        serverErrors: sums.serverErrors,
        upstreamFailures: sums.upstreamFailures,
        clientLeft: sums.clientLeft,
        ttfb: sums.ttfb.toWire(),
        ttlb: sums.ttlb.toWire(),
      };
    });
  }
}

/** `minutes` folded at once (`MinutesFold`). */
export function foldedMinutes(minutes: Iterable<RuntimeMinute>): RuntimeMinute[] {
  const fold = new MinutesFold();
  fold.add(minutes);
  return fold.minutes();
}

const PERCENTILES = [0.5, 0.95, 0.99] as const;

function percentiles(histogram: LatencyHistogram): LatencyPercentiles | null {
  const values = histogram.quantiles(PERCENTILES);
  if (values === null) return null;
  const [p50, p95, p99] = values as [number, number, number];
  return { p50: toMicros(p50), p95: toMicros(p95), p99: toMicros(p99) };
}

/** The figures of `sums` over `seconds`, beside `everyVersion` requests of all versions in the same time. */
function pointOf(sums: RuntimeSums, seconds: number, everyVersion: number): Omit<RuntimePoint, 'at'> {
  return {
    requests: sums.requests,
    requestRate: sums.requests / seconds,
    share: everyVersion === 0 ? 0 : sums.requests / everyVersion,
    serverErrors: sums.serverErrors,
    errorRate: sums.requests === 0 ? 0 : sums.serverErrors / sums.requests,
    upstreamFailures: sums.upstreamFailures,
    clientLeft: sums.clientLeft,
    ttfb: percentiles(sums.ttfb),
    ttlb: percentiles(sums.ttlb),
  };
}

function clearSums(sums: RuntimeSums): void {
  sums.requests = sums.serverErrors = sums.upstreamFailures = sums.clientLeft = 0;
  sums.ttfb.clear();
  sums.ttlb.clear();
}

/** Adds a row's counts and histograms to a series point's sums and its version's total, each histogram read once. */
function addRow(point: RuntimeSums, total: RuntimeSums, row: RuntimeStepRow): void {
  addCounts(point, row);
  addCounts(total, row);
  point.ttfb.addWireText(row.ttfb, total.ttfb);
  point.ttlb.addWireText(row.ttlb, total.ttlb);
}

/**
 * The ISO 8601 text of step starts (whole minutes since 1970, UTC), `Date.toISOString` once per
 * day: a series of 1,440 points must not format a Date per point.
 */
class StepTexts {
  private day = Number.NaN;
  private prefix = '';

  of(ms: number): string {
    const day = ms - (ms % DAY_MS);
    const minutes = (ms - day) / MINUTE_MS;
    if (ms < 0 || !Number.isInteger(minutes)) return new Date(ms).toISOString();
    if (day !== this.day) {
      this.day = day;
      this.prefix = new Date(day).toISOString().slice(0, 11); // 'YYYY-MM-DDT'
    }
    const hour = Math.floor(minutes / 60);
    const minute = minutes % 60;
    return `${this.prefix}${hour < 10 ? '0' : ''}${hour}:${minute < 10 ? '0' : ''}${minute}:00.000Z`;
  }
}

/** Requests of every version per step (by its start, ms) and in the window: what each version's share is of. */
function requestsOfEveryVersion(rows: ReadonlyArray<{ at: Date | number; requests: string | number }>): {
  perStep: Map<number, number>;
  all: number;
} {
  const perStep = new Map<number, number>();
  let all = 0;
  for (const row of rows) {
    const at = typeof row.at === 'number' ? row.at : row.at.getTime();
    perStep.set(at, (perStep.get(at) ?? 0) + Number(row.requests));
    all += Number(row.requests);
  }
  return { perStep, all };
}

/** A runtime cell's requests, error rate and p95 of time to last byte, as answered. */
function cellFigures(cell: RuntimeCellRow): Omit<CellRuntime, 'column'> {
  const requests = Number(cell.requests);
  return {
    requests,
    errorRate: requests === 0 ? 0 : Number(cell.serverErrors) / requests,
    p95: cell.p95Bucket === null ? null : toMicros(histogramBucketValue(cell.p95Bucket)),
  };
}

/** What `GET …/runtime` asks. */
export interface RuntimeQueryInput {
  environment: MatrixKind;
  since?: string;
  step?: RuntimeResolution;
  pullRequest?: string;
  build?: string;
}

/**
 * Runtime evidence (issue 18): the timings and counts agents send, kept per endpoint, environment
 * row, version and minute, rolled up into hours and days as they age, and read back as series of
 * p50/p95/p99, error rate and request rate per version.
 */
@Injectable()
export class RuntimeService implements OnModuleInit, OnModuleDestroy {
  private readonly log: Logger;
  private readonly rollups: PeriodicJob;
  private readonly minuteRollups: PeriodicJob;
  /** How long each resolution is kept (config `runtimeRetention`), in milliseconds. */
  private readonly kept: Record<RuntimeResolution, number>;

  constructor(
    private readonly repository: RuntimeRepository,
    private readonly partitions: PartitionsRepository,
    private readonly versions: VersionStore,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'runtime' });
    const { minuteDays, hourDays, dayDays } = runtime.config.runtimeRetention;
    this.kept = { minute: minuteDays * DAY_MS, hour: hourDays * DAY_MS, day: dayDays * DAY_MS };
    this.rollups = new PeriodicJob('pruning runtime evidence', ROLLUP_INTERVAL_MS, () => this.rollUp(), this.log);
    // How often this replica rolls the minutes folds added up into their minute, hour and day rows (one at a time).
    this.minuteRollups = new PeriodicJob(
      'rolling runtime minutes up',
      runtime.config.runtimeRollupSeconds * 1000,
      () => this.rollUpMinutes(),
      this.log,
    );
  }

  onModuleInit(): void {
    this.rollups.start();
    this.minuteRollups.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([this.rollups.stop(), this.minuteRollups.stop()]);
  }

  /**
   * The runtime minutes of several batches of one environment row (queued with its evidence and
   * folded with it, evidence/evidence.service.ts), each batch's list added as the fold reads it
   * and folded at once: one per endpoint and minute (`MinutesFold`). `write` writes them in the
   * fold's transaction, after its cells (so each endpoint's rows go under the version its cell
   * names now), waiting for the roll-up into their minute, hour and day rows (`rollUpMinutes`).
   */
  recordFolded(projectId: string): FoldedLists<RuntimeMinute, { kind: MatrixKind; name: string }> {
    const fold = new MinutesFold();
    return {
      add: (minutes) => fold.add(minutes),
      write: (manager, row) => this.repository.addMinutes(manager, projectId, row, fold.minutes()),
    };
  }

  /**
   * Adds the minutes folds added since the last roll-up to their minute, hour and day rows, in one
   * transaction per replica at a time (a replica that finds another at it leaves it; `wait` waits
   * for it instead). Each minute is taken once: it leaves `runtime_minutes_added` in the
   * transaction that adds it, and reads add the minutes still there, so figures never depend on
   * when this runs. `projectId` for tests.
   * @returns how many minutes (one endpoint's at one minute, of one fold) were rolled up, or null
   * when another replica was at it.
   */
  rollUpMinutes(wait = false, projectId: string | null = null): Promise<number | null> {
    return this.repository.rollUp(projectId, wait);
  }

  /**
   * Regrouping (paths/regroup.service.ts), in its transaction: the rows of `literals` of the
   * environment rows `rowIds` (every row when null) move into `template`'s, so no literal is left.
   * @returns how many rows moved.
   */
  regroup(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    return this.repository.regroup(manager, projectId, rowIds, literals, template);
  }

  /**
   * The runtime beside the matrix cells of `rows` (environment rows, in page order) × `columns`
   * (endpoints, in column order): per row, the cells with runtime evidence in ascending column order.
   */
  async cells(
    projectId: string,
    rows: ReadonlyArray<{ kind: string; name: string }>,
    columns: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<CellRuntime[][]> {
    const rowOf = new Map(rows.map((row, index) => [`${row.kind} ${row.name}`, index]));
    const columnOf = new Map(columns.map((column, index) => [`${column.method} ${column.path}`, index]));
    const result: CellRuntime[][] = rows.map(() => []);
    for (const cell of await this.repository.cells(projectId, rows)) {
      const row = rowOf.get(`${cell.kind} ${cell.name}`);
      const column = columnOf.get(`${cell.method} ${cell.path}`);
      // Undocumented endpoints have no column.
      if (row === undefined || column === undefined) continue;
      (result[row] as CellRuntime[]).push({ column, ...cellFigures(cell) });
    }
    for (const cells of result) cells.sort((a, b) => a.column - b.column);
    return result;
  }

  /** Every endpoint's runtime in one environment row since it began (`runtime_cells`), documented or not, by path. */
  async rowFigures(projectId: string, row: { kind: string; name: string }): Promise<EndpointRuntimeFigures[]> {
    return (await this.repository.cells(projectId, [row]))
      .map((cell) => ({ method: cell.method, path: cell.path, ...cellFigures(cell) }))
      .sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }

  /**
   * Deletes the rows of each resolution past its retention: partitions all past it are dropped, and
   * in the partition the horizon cuts (and the default partition) rows are deleted, at most
   * `ROLLUP_CHUNK` per statement (partitions are made ahead by partitions/). Every resolution
   * holds all of the traffic (with the minutes not yet rolled up: `rollUpMinutes`),
   * so nothing moves here: deleting is exact whichever replica runs it. `now` for tests.
   * @returns rows deleted per resolution.
   */
  async rollUp(now = new Date()): Promise<Record<RuntimeResolution, number>> {
    const done: Record<RuntimeResolution, number> = { minute: 0, hour: 0, day: 0 };
    for (const resolution of RESOLUTIONS) {
      const before = new Date(now.getTime() - this.kept[resolution]);
      for (const partition of await this.partitions.stored(RUNTIME_ROWS[resolution].parent)) {
        if (this.rollups.isStopped) break;
        if (partition.to !== null && partition.to.getTime() <= before.getTime()) {
          done[resolution] += await this.partitions.drop(partition.name);
          continue;
        }
        if (partition.from !== null && partition.from.getTime() >= before.getTime()) continue;
        for (;;) {
          const deleted = await this.repository.prunePartition(partition.name, before, ROLLUP_CHUNK);
          done[resolution] += deleted;
          if (deleted < ROLLUP_CHUNK || this.rollups.isStopped) break;
        }
      }
    }
    if (done.minute + done.hour + done.day > 0) this.log.info(done, 'pruned runtime evidence');
    return done;
  }

  /** The finest resolution whose rows still hold all of the traffic since `since`. */
  resolutionSince(since: Date, now = new Date()): RuntimeResolution {
    const window = now.getTime() - since.getTime();
    return window <= this.kept.minute ? 'minute' : window <= this.kept.hour ? 'hour' : 'day';
  }

  /**
   * One endpoint's runtime in one environment since `since` (default the last 24 hours): a
   * series per version, each point one step (minute, hour or day: by default the finest that
   * keeps the window under `MAX_RUNTIME_POINTS` points and that the data still has).
   * @throws DomainError EndpointNotFound, or BadInput naming the parameter.
   */
  async series(
    project: ProjectEntity,
    endpointId: string,
    query: RuntimeQueryInput,
    now = new Date(),
  ): Promise<RuntimeResponse> {
    const [endpoint] = await this.versions.endpointsByIds(project.id, [endpointId]);
    if (endpoint === undefined)
      throw new DomainError(
        ErrorCode.EndpointNotFound,
        `endpoint ${endpointId} does not exist in project ${project.slug}`,
      );
    return this.seriesOf(project, { id: endpointId, method: endpoint.method, path: endpoint.path }, query, now);
  }

  /**
   * The same for an endpoint named by method and path, documented or not (undocumented endpoints
   * have no id; their runtime is kept under no version, `''`). `endpoint.id` is the documented
   * endpoint's, or null. An endpoint without runtime evidence has no series (not a 404: traffic may
   * not have come yet).
   * @throws DomainError BadInput naming the parameter.
   */
  async routeSeries(
    project: ProjectEntity,
    route: { method: string; path: string },
    query: RuntimeQueryInput,
    now = new Date(),
  ): Promise<RuntimeResponse> {
    const id = await this.versions.endpointIdOf(project.id, route.method, route.path);
    return this.seriesOf(project, { id, ...route }, query, now);
  }

  /**
   * The window a runtime query asks for: its first step's start, the step (by default the finest
   * that keeps it under `MAX_RUNTIME_POINTS` points and that the data still has at `since`, by
   * default 24 hours ago) and the environment row named (`PR #42`, a build), or null for all.
   * @throws DomainError BadInput naming the parameter.
   */
  private windowOf(
    query: RuntimeQueryInput,
    now: Date,
  ): { since: Date; step: (typeof STEPS)[number]; name: string | null } {
    const sinceMs = query.since === undefined ? now.getTime() - DAY_MS : Date.parse(query.since);
    if (Number.isNaN(sinceMs)) throw badInput('since must be an ISO 8601 time');
    if (sinceMs > now.getTime()) throw badInput('since must not be in the future');
    const window = now.getTime() - sinceMs;
    // The finest step the data has at `since` (minutes are kept two days by default, hours 35).
    const finest = window <= this.kept.minute ? 0 : window <= this.kept.hour ? 1 : 2;
    const fitting = STEPS.findIndex((step, i) => i >= finest && window / step.ms <= MAX_RUNTIME_POINTS);
    const asked = query.step === undefined ? -1 : STEPS.findIndex((step) => step.name === query.step);
    if (asked >= 0 && window / (STEPS[asked] as { ms: number }).ms > MAX_RUNTIME_POINTS)
      throw badInput(
        `step ${query.step} makes more than ${MAX_RUNTIME_POINTS} points since ${query.since}: ask a larger step`,
      );
    const step = STEPS[asked >= 0 ? asked : fitting < 0 ? STEPS.length - 1 : fitting] as (typeof STEPS)[number];
    // Steps start at whole steps (UTC), the first the one `since` is in.
    const since = new Date(sinceMs - (sinceMs % step.ms));
    const name =
      query.environment === 'ci' && query.pullRequest !== undefined
        ? pullRequestRowName(query.pullRequest)
        : (query.build ?? null);
    return { since, step, name };
  }

  private async seriesOf(
    project: ProjectEntity,
    route: { id: string | null; method: string; path: string },
    query: RuntimeQueryInput,
    now: Date,
  ): Promise<RuntimeResponse> {
    const { since, step, name } = this.windowOf(query, now);
    const rows = await this.repository.steps(
      { projectId: project.id, method: route.method, path: route.path, kind: query.environment, name, since },
      step.name,
    );
    const { perStep, all } = requestsOfEveryVersion(rows);
    // Rows come in version and time order, one per environment row: each (version, step) is one
    // point, its rows summed in one reused `point` and added to the version's total.
    const versions = new Map<string, { total: RuntimeSums; points: RuntimePoint[] }>();
    const point = emptySums();
    const texts = new StepTexts();
    for (let i = 0; i < rows.length;) {
      const { version, at } = rows[i] as RuntimeStepRow;
      let series = versions.get(version);
      if (series === undefined) versions.set(version, (series = { total: emptySums(), points: [] }));
      clearSums(point);
      for (let row = rows[i]; row !== undefined && row.version === version && row.at === at; row = rows[++i])
        addRow(point, series.total, row);
      series.points.push({ at: texts.of(at), ...pointOf(point, step.ms / 1000, perStep.get(at) ?? 0) });
    }
    const windowSeconds = Math.max(1, (now.getTime() - since.getTime()) / 1000);
    return {
      endpoint: { id: route.id, method: route.method, path: route.path },
      environment: query.environment,
      name,
      since: since.toISOString(),
      step: step.ms / 1000,
      versions: [...versions].map(([version, series]) => ({
        version,
        total: pointOf(series.total, windowSeconds, all),
        points: series.points,
      })),
    };
  }
  /**
   * Which versions an environment's traffic ran on since `since` (`GET /runtime/share`): every
   * endpoint's requests together per version and step, and each endpoint's per version over the
   * window. Shares are of the requests of every version in the same step (or window), so a canary
   * on 30 % of the requests shows 0.3, and each step's shares add up to 1.
   * @throws DomainError BadInput naming the parameter.
   */
  async share(project: ProjectEntity, query: RuntimeQueryInput, now = new Date()): Promise<VersionShareResponse> {
    const { since, step, name } = this.windowOf(query, now);
    const scope = { projectId: project.id, kind: query.environment, name, since };
    const [steps, endpoints] = await Promise.all([
      this.repository.shareSteps(scope, step.name),
      this.repository.shareEndpoints(scope, this.resolutionSince(since, now)),
    ]);
    const perVersion = new Map<string, { requests: number; points: VersionSharePoint[] }>();
    const { perStep, all } = requestsOfEveryVersion(steps);
    for (const row of steps) {
      let version = perVersion.get(row.version);
      if (version === undefined) perVersion.set(row.version, (version = { requests: 0, points: [] }));
      const requests = Number(row.requests);
      const at = new Date(row.at);
      version.requests += requests;
      version.points.push({
        at: at.toISOString(),
        requests,
        share: requests / (perStep.get(at.getTime()) ?? requests),
      });
    }
    const perEndpoint = new Map<string, VersionShareResponse['endpoints'][number]>();
    for (const row of endpoints) {
      const key = `${row.method} ${row.path}`;
      let endpoint = perEndpoint.get(key);
      if (endpoint === undefined)
        perEndpoint.set(
          key,
          (endpoint = { endpointId: row.endpointId, method: row.method, path: row.path, requests: 0, versions: [] }),
        );
      endpoint.requests += Number(row.requests);
      endpoint.versions.push({ version: row.version, requests: Number(row.requests), share: 0 });
    }
    const byShare = (a: VersionShare, b: VersionShare): number =>
      b.requests - a.requests || a.version.localeCompare(b.version);
    for (const endpoint of perEndpoint.values()) {
      for (const version of endpoint.versions) version.share = version.requests / endpoint.requests;
      endpoint.versions.sort(byShare);
    }
    return {
      environment: query.environment,
      name,
      since: since.toISOString(),
      step: step.ms / 1000,
      versions: [...perVersion]
        .map(([version, { requests, points }]) => ({ version, requests, share: requests / all, points }))
        .sort(byShare),
      endpoints: [...perEndpoint.values()].sort(
        (a, b) => b.requests - a.requests || a.path.localeCompare(b.path) || a.method.localeCompare(b.method),
      ),
    };
  }
}
