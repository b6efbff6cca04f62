import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type BatchMessage,
  type BlastRadiusPart,
  type BlastRadiusResponse,
  type ChangeResponse,
  CONSUMER_ID_PATTERN,
  type ConsumerLabelResponse,
  type ConsumersResponse,
  type ConsumerUse,
  DEFAULT_CONSUMER_DAYS,
  type EndpointConsumersResponse,
  type EndpointConsumersRow,
  MAX_CONSUMER_DAYS,
  type MatrixKind,
} from '@spectator/shared';
import type { Logger } from 'pino';
import type { EntityManager } from 'typeorm';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';
import type { FoldedLists } from '../common/folded-lists';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import {
  addedCalls,
  ALL_CALLS,
  type ConsumerDay,
  type ConsumerRow,
  ConsumersRepository,
  type ConsumerSum,
  type LabelRow,
  OTHER_CONSUMERS,
} from './consumers.repository';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Days of consumer calls kept; older days are deleted. */
export const CONSUMER_RETENTION_DAYS = MAX_CONSUMER_DAYS;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/**
 * How often a replica's folds of one environment row merge the consumer calls waiting for it into
 * the row's keys (`ConsumersRepository.compact`); the folds between only insert theirs. A key's
 * row is then rewritten about once a minute per replica instead of at every fold (about two a
 * second for a busy build), and reads add at most about a minute of folds' rows per key and replica.
 */
export const COMPACT_MS = 60_000;
/** Environment rows whose last compaction a replica remembers (the least recently folded are forgotten, then compacted at their next fold). */
const COMPACTED_ROWS = 10_000;
/** Builds listed with an environment's consumers at most (newest call first). */
const MAX_BUILDS_LISTED = 100;
/** Characters of a label at most. */
export const MAX_LABEL_LENGTH = 200;

/** The UTC day of an ISO time, `YYYY-MM-DD`. */
const dayOf = (time: string | number): string => new Date(time).toISOString().slice(0, 10);

/**
 * One endpoint and status of a batch's queued consumer calls (`packedConsumerDays`), as unpacked:
 * `calls` holds (consumer, calls, last call in epoch milliseconds) triples, flat; each triple's day
 * is its last call's UTC day (a consumer called on two days has a triple for each).
 */
export interface QueuedConsumerCalls {
  method: string;
  path: string;
  status: number;
  calls: Array<string | number>;
}

/** A queued list's item: as queued since session 24, or a `ConsumerDay` as queued before (a row still queued then). */
export type QueuedConsumers = QueuedConsumerCalls | ConsumerDay;

/**
 * A fold's queued consumer calls (of its batches, `packedConsumerDays`) as rows: one per endpoint,
 * status and day, with each consumer's calls added up and its last call (epoch milliseconds).
 * Reads items queued before session 24 too (`ConsumerDay`s, one per consumer and day). Added up as
 * a fold reads each batch's list (`add`).
 */
export class ConsumerFold {
  private readonly rows = new Map<string, ConsumerRow>();
  private readonly days = new Map<number, string>();

  add(items: Iterable<QueuedConsumers>): void {
    for (const item of items) {
      if (!Array.isArray(item.calls)) {
        const d = item as ConsumerDay;
        this.addCalls(d, d.consumer, d.calls, Date.parse(d.lastCall), d.day);
        continue;
      }
      const calls = item.calls;
      for (let i = 0; i + 2 < calls.length; i += 3) {
        const at = calls[i + 2] as number;
        const dayNumber = Math.floor(at / DAY_MS);
        let day = this.days.get(dayNumber);
        if (day === undefined) this.days.set(dayNumber, (day = dayOf(dayNumber * DAY_MS)));
        this.addCalls(item, calls[i] as string, calls[i + 1] as number, at, day);
      }
    }
  }

  /** The rows added so far, one per endpoint, status and day. */
  folded(): ConsumerRow[] {
    return [...this.rows.values()];
  }

  private addCalls(item: QueuedConsumers, consumer: string, calls: number, at: number, day: string): void {
    const key = `${item.method}\u0000${item.path}\u0000${item.status}\u0000${day}`;
    let row = this.rows.get(key);
    if (row === undefined)
      this.rows.set(
        key,
        (row = { method: item.method, path: item.path, status: item.status, day, consumers: new Map() }),
      );
    row.consumers.set(consumer, addedCalls(row.consumers.get(consumer), [calls, at]));
  }
}

/** `items` folded at once (`ConsumerFold`). */
export function consumerRows(items: Iterable<QueuedConsumers>): ConsumerRow[] {
  const fold = new ConsumerFold();
  fold.add(items);
  return fold.folded();
}

/** The fields of a packed item of queued consumer calls, `method` and `path` first (queued-payload.ts). */
const CONSUMER_CALLS_FIELDS: ReadonlyArray<keyof QueuedConsumerCalls> = ['method', 'path', 'status', 'calls'];

/**
 * A batch's consumer calls folded per endpoint, status, consumer and day (of each consumer's last
 * call): every call of a row that names consumers under `*`, the overflow under `+`. Rows of agents
 * that identify no consumers add nothing. The batch statement queues them without the endpoints the
 * capture did not keep (past its cap), as it does the evidence (WRITE_BATCH).
 *
 * Made packed, as `evidence_queue` keeps them (`packList`'s JSON text of `QueuedConsumerCalls`, equal
 * to it byte for byte), in one pass, never an object a day (issue 20: the days as objects, then the
 * table from them, allocated 88 KiB for the scale bench's 40-row batch). One item per endpoint and
 * status, its consumers' (consumer, calls, last call) triples flat, the last call in epoch
 * milliseconds and no day (it is the last call's): the scale batch's 8.9 KB of text (an item per
 * consumer and day, each naming its endpoint, day and last call as text) are 4.4 KB, stored in
 * 0.74 KB instead of 1.06 (issue 20, session 24).
 */
export function packedConsumerDays(batch: BatchMessage): string {
  // Per endpoint and status its item, and where each (consumer, day) triple is in its calls.
  const items = new Map<string, { calls: Array<string | number>; at: Map<string, number> }>();
  const table: unknown[] = [CONSUMER_CALLS_FIELDS];
  // A batch's times are mostly a few distinct ones: each one is parsed once.
  const msOfTime = new Map<string, number>();
  for (const o of batch.observations) {
    if (o.consumers === undefined) continue;
    // NUL cannot occur in a validated method or path.
    const key = `${o.method}\u0000${o.path}\u0000${o.status}`;
    let item = items.get(key);
    if (item === undefined) {
      item = { calls: [], at: new Map() };
      items.set(key, item);
      table.push([o.method, o.path, o.status, item.calls]);
    }
    const { calls: list, at: positions } = item;
    const add = (consumer: string, calls: number, time: string): void => {
      let ms = msOfTime.get(time);
      if (ms === undefined) msOfTime.set(time, (ms = Date.parse(time)));
      // Merged by consumer and day (calls added, the latest last call): a batch queues each once.
      const at = `${consumer}\u0000${Math.floor(ms / DAY_MS)}`;
      const position = positions.get(at);
      if (position === undefined) {
        positions.set(at, list.length);
        list.push(consumer, calls, ms);
      } else {
        list[position + 1] = (list[position + 1] as number) + calls;
        if (ms > (list[position + 2] as number)) list[position + 2] = ms;
      }
    };
    add(ALL_CALLS, o.count, o.lastSeen);
    for (const c of o.consumers) add(c.id, c.count, c.lastSeen);
    if (o.consumersOverflow) add(OTHER_CONSUMERS, o.consumersOverflow, o.lastSeen);
  }
  return table.length === 1 ? '[]' : JSON.stringify(table);
}

/** A window of the last `days` days: its first day (UTC). @throws DomainError BadInput */
export function windowOf(days: number | undefined, now = Date.now()): { days: number; since: string } {
  const n = days ?? DEFAULT_CONSUMER_DAYS;
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONSUMER_DAYS)
    throw badInput(`days must be an integer from 1 to ${MAX_CONSUMER_DAYS}`);
  return { days: n, since: dayOf(now - (n - 1) * DAY_MS) };
}

/** @throws DomainError BadInput unless `consumer` is a pseudonym. */
export function assertPseudonym(consumer: string): void {
  if (!CONSUMER_ID_PATTERN.test(consumer))
    throw badInput('consumer must be a pseudonym: 16 hexadecimal digits (spectator-agent consumer-id prints it)');
}

const labelResponse = (row: LabelRow): ConsumerLabelResponse => ({
  consumer: row.consumer,
  label: row.label,
  updatedBy: row.updatedBy,
  updatedAt: new Date(row.updatedAt).toISOString(),
});

/** A broken endpoint and its breaking changes, from a diff, a comparison or a proposal. */
export interface BrokenEndpoint {
  method: string;
  path: string;
  changes: readonly ChangeResponse[];
}

/**
 * The status whose calls a change affects: a response change names its status; a new status, a
 * request, query or header change affects calls of every status (null).
 */
export function affectedStatus(change: ChangeResponse): number | null {
  return change.in === 'response' && change.status !== undefined && change.change !== 'new status'
    ? change.status
    : null;
}

/** Per-window sums of one group (a part, a status): all calls, the others, and each named consumer. */
function split(
  sums: readonly ConsumerSum[],
  labels: ReadonlyMap<string, string>,
): { calls: number; otherCalls: number; consumers: ConsumerUse[] } {
  let calls = 0;
  let otherCalls = 0;
  const named: ConsumerSum[] = [];
  for (const sum of sums) {
    if (sum.consumer === ALL_CALLS) calls = Number(sum.calls);
    else if (sum.consumer === OTHER_CONSUMERS) otherCalls = Number(sum.calls);
    else named.push(sum);
  }
  return {
    calls,
    otherCalls,
    consumers: named.map((sum) => ({
      consumer: sum.consumer,
      label: labels.get(sum.consumer) ?? null,
      calls: Number(sum.calls),
      share: calls === 0 ? 0 : Number(sum.calls) / calls,
      lastCall: new Date(sum.lastCall).toISOString(),
    })),
  };
}

/**
 * Consumers (issue 19): calls per endpoint, status, environment kind and consumer pseudonym, written
 * by ingest, kept 400 days, read as who calls what and as the blast radius of breaking changes; and
 * the labels a team gives pseudonyms.
 */
@Injectable()
export class ConsumersService implements OnModuleInit, OnModuleDestroy {
  private readonly log: Logger;
  private readonly pruning: PeriodicJob;
  /** When this replica's folds last compacted each environment row (`performance.now()`). */
  private readonly compacted = new LruCache<string, number>(COMPACTED_ROWS);

  constructor(
    private readonly repository: ConsumersRepository,
    private readonly versions: VersionStore,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'consumers' });
    this.pruning = new PeriodicJob('pruning consumer calls', PRUNE_INTERVAL_MS, () => this.prune(), this.log);
  }

  onModuleInit(): void {
    this.pruning.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.pruning.stop();
  }

  /**
   * The consumer calls of batches of one environment row (queued with their evidence, made by
   * `packedConsumerDays`), each batch's list added as the fold reads it and folded at once
   * (`ConsumerFold`). `write` writes them in the transaction of the row's fold
   * (ingest/evidence-folder.ts): the fold holds the row, so no other transaction writes these
   * counts meanwhile, and each batch is counted once, when it leaves the queue. They wait for the
   * row's compaction, which the row's first fold on this replica and then one every COMPACT_MS do.
   */
  recordFolded(projectId: string): FoldedLists<QueuedConsumers, { id: string; kind: MatrixKind }> {
    const fold = new ConsumerFold();
    return {
      add: (items) => fold.add(items),
      write: async (manager, row) => {
        const last = this.compacted.get(row.id);
        const now = performance.now();
        const compact = last === undefined || now - last >= COMPACT_MS;
        await this.repository.addRows(manager, projectId, row, fold.folded(), compact);
        // Noted once done (should the fold roll back later, the rows wait for the next compaction).
        if (compact) this.compacted.set(row.id, now);
      },
    };
  }

  /**
   * The row of an environment's build (staging, production; `PR #n` for a CI run), null for none asked.
   * @throws DomainError BuildNotFound when the environment has no such row.
   */
  private async rowOf(
    project: ProjectEntity,
    environment: MatrixKind,
    build: string | undefined,
  ): Promise<string | null> {
    if (build === undefined) return null;
    const rowId = await this.repository.rowOf(project.id, environment, build);
    if (rowId === null)
      throw new DomainError(
        ErrorCode.BuildNotFound,
        `environment ${environment} has no build ${build} in project ${project.slug}`,
      );
    return rowId;
  }

  /** Regrouping (paths/regroup.service.ts), in its transaction: rows of `literals` move into `template`'s. */
  regroup(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    return this.repository.regroup(manager, projectId, rowIds, literals, template);
  }

  /** Deletes days past retention. `now` for tests. @returns rows deleted. */
  async prune(now = Date.now()): Promise<number> {
    const deleted = await this.repository.prune(dayOf(now - CONSUMER_RETENTION_DAYS * DAY_MS));
    if (deleted > 0) this.log.info({ deleted }, 'pruned consumer calls past retention');
    return deleted;
  }

  private async labelMap(projectId: string): Promise<Map<string, string>> {
    return new Map((await this.repository.labels(projectId)).map((row) => [row.consumer, row.label]));
  }

  /** Every consumer of an environment in the window, with its label; labelled pseudonyms not seen apart. */
  async list(
    project: ProjectEntity,
    environment: MatrixKind,
    days?: number,
    build?: string,
  ): Promise<ConsumersResponse> {
    const window = windowOf(days);
    const rowId = await this.rowOf(project, environment, build);
    const [sums, labels, builds] = await Promise.all([
      this.repository.consumersOf(project.id, environment, window.since, rowId),
      this.repository.labels(project.id),
      this.repository.buildsOf(project.id, environment, window.since, MAX_BUILDS_LISTED),
    ]);
    const byConsumer = new Map(labels.map((row) => [row.consumer, row.label]));
    const { calls, otherCalls, consumers } = split(sums, byConsumer);
    const endpoints = new Map(sums.map((sum) => [sum.consumer, sum.endpoints]));
    const seen = new Set(consumers.map((c) => c.consumer));
    return {
      environment,
      build: build ?? null,
      days: window.days,
      since: window.since,
      calls,
      otherCalls,
      builds: builds.map((b) => ({
        build: b.build,
        calls: Number(b.calls),
        lastCall: new Date(b.lastCall).toISOString(),
      })),
      consumers: consumers.map((c) => ({ ...c, endpoints: endpoints.get(c.consumer) ?? 0 })),
      unseen: labels.filter((row) => !seen.has(row.consumer)).map(labelResponse),
    };
  }

  /**
   * One endpoint's consumers per environment kind and status in the window (of one build of the
   * environment when `build` is given).
   * @throws DomainError EndpointNotFound, BadInput for a bad window.
   */
  async ofEndpoint(
    project: ProjectEntity,
    endpointId: string,
    environment: MatrixKind | null,
    days?: number,
    build?: string,
  ): Promise<EndpointConsumersResponse> {
    const window = windowOf(days);
    if (build !== undefined && environment === null) throw badInput('build needs an environment');
    const rowId = environment === null ? null : await this.rowOf(project, environment, build);
    const [endpoint] = await this.versions.endpointsByIds(project.id, [endpointId]);
    if (endpoint === undefined)
      throw new DomainError(
        ErrorCode.EndpointNotFound,
        `endpoint ${endpointId} does not exist in project ${project.slug}`,
      );
    const route = { method: endpoint.method, path: endpoint.path };
    const [sums, labels] = await Promise.all([
      this.repository.endpointCalls(project.id, route, environment, window.since, rowId),
      this.labelMap(project.id),
    ]);
    const groups = new Map<string, typeof sums>();
    for (const sum of sums) {
      const key = `${sum.environment} ${sum.status}`;
      groups.set(key, [...(groups.get(key) ?? []), sum]);
    }
    const rows: EndpointConsumersRow[] = [...groups.values()].map((group) => {
      const first = group[0] as (typeof sums)[number];
      return { environment: first.environment, status: first.status, ...split(group, labels) };
    });
    return {
      endpoint: { id: endpointId, ...route },
      build: build ?? null,
      days: window.days,
      since: window.since,
      rows,
    };
  }

  /**
   * Who breaking changes break: each change's part (the endpoint, and its status for a response
   * change), with the consumers that called it in `environment` in the window, their share of the
   * part's calls and their last call; and the affected set, every such consumer once.
   * Changes that are not breaking are left out.
   */
  async blastRadius(
    project: ProjectEntity,
    broken: readonly BrokenEndpoint[],
    environment: MatrixKind,
    days?: number,
    build?: string,
  ): Promise<BlastRadiusResponse> {
    const window = windowOf(days);
    const rowId = await this.rowOf(project, environment, build);
    const parts = new Map<string, { method: string; path: string; status: number | null; changes: ChangeResponse[] }>();
    const seenChanges = new Set<string>();
    for (const endpoint of broken)
      for (const change of endpoint.changes) {
        if (!change.breaking) continue;
        const status = affectedStatus(change);
        const key = `${endpoint.method} ${endpoint.path} ${status ?? '*'}`;
        const changeKey = `${key} ${change.change} ${change.in} ${change.status ?? ''} ${change.at}`;
        if (seenChanges.has(changeKey)) continue;
        seenChanges.add(changeKey);
        let part = parts.get(key);
        if (part === undefined)
          parts.set(key, (part = { method: endpoint.method, path: endpoint.path, status, changes: [] }));
        part.changes.push(change);
      }
    const list = [...parts.values()];
    const [sums, labels] = await Promise.all([
      this.repository.partCalls(project.id, list, environment, window.since, rowId),
      this.labelMap(project.id),
    ]);
    const byPart = new Map<number, ConsumerSum[]>();
    for (const sum of sums) byPart.set(sum.part, [...(byPart.get(sum.part) ?? []), sum]);
    const affected = new Map<string, { consumer: string; label: string | null; calls: number; lastCall: string }>();
    let otherCalls = 0;
    const answer: BlastRadiusPart[] = list.map((part, i) => {
      const figures = split(byPart.get(i + 1) ?? [], labels);
      otherCalls += figures.otherCalls;
      for (const use of figures.consumers) {
        const before = affected.get(use.consumer);
        if (before === undefined)
          affected.set(use.consumer, {
            consumer: use.consumer,
            label: use.label,
            calls: use.calls,
            lastCall: use.lastCall,
          });
        else {
          before.calls += use.calls;
          if (use.lastCall > before.lastCall) before.lastCall = use.lastCall;
        }
      }
      return { ...part, ...figures };
    });
    return {
      environment,
      build: build ?? null,
      days: window.days,
      since: window.since,
      parts: answer,
      consumers: [...affected.values()].sort((a, b) => b.calls - a.calls || a.consumer.localeCompare(b.consumer)),
      otherCalls,
    };
  }

  /** Names a pseudonym. @throws DomainError BadInput for a malformed pseudonym or label. */
  async setLabel(
    project: ProjectEntity,
    consumer: string,
    label: string,
    by: string | null,
  ): Promise<ConsumerLabelResponse> {
    assertPseudonym(consumer);
    const text = label.trim();
    if (text === '' || text.length > MAX_LABEL_LENGTH)
      throw badInput(`label must be 1 to ${MAX_LABEL_LENGTH} characters`);
    return labelResponse(await this.repository.setLabel(project.id, consumer, text, by));
  }

  /** Forgets a pseudonym's name. @throws DomainError BadInput for a malformed pseudonym, ConsumerNotFound when it had none. */
  async removeLabel(project: ProjectEntity, consumer: string): Promise<void> {
    assertPseudonym(consumer);
    if (!(await this.repository.removeLabel(project.id, consumer)))
      throw new DomainError(ErrorCode.ConsumerNotFound, `consumer ${consumer} has no label in project ${project.slug}`);
  }
}
