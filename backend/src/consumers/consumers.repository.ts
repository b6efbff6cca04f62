import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { MatrixKind } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { integerArrayLiteral, textArrayLiteral } from '../captures/batch-statement';
import { queryPrepared } from '../common/prepared';

/** Every call counted by agents that identify consumers (what shares are of). */
export const ALL_CALLS = '*';
/** Calls of consumers past an agent's bound: counted, not named. */
export const OTHER_CONSUMERS = '+';

/** One day of one consumer's calls of an endpoint and status, folded from a batch. */
export interface ConsumerDay {
  method: string;
  path: string;
  status: number;
  /** A pseudonym, `ALL_CALLS` or `OTHER_CONSUMERS`. */
  consumer: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  calls: number;
  /** ISO 8601. */
  lastCall: string;
}

/** Calls of a consumer in a window, summed (`calls` as text: bigint). */
export interface ConsumerSum {
  consumer: string;
  calls: string;
  lastCall: Date;
}

export interface LabelRow {
  consumer: string;
  label: string;
  updatedBy: string | null;
  updatedAt: Date;
}

/**
 * Named consumers one row (environment row, endpoint, status, day) keeps at most: calls of further
 * consumers are counted under `OTHER_CONSUMERS`, so a row stays bounded (~40 KB) however many
 * pseudonyms call an endpoint. A fold names new consumers while there is room, first come; a
 * regrouping that merges rows keeps those with most calls.
 */
export const MAX_CONSUMERS_PER_KEY = 1_000;

/** A consumer's calls in a row: how many, and the last one (epoch milliseconds). */
export type StoredCalls = [calls: number, lastCall: number];

/** One row's consumers: pseudonym, `ALL_CALLS` or `OTHER_CONSUMERS` → calls. */
export type StoredConsumers = Record<string, StoredCalls>;

/** A fold's calls of one endpoint and status on one day, per consumer (`consumerRows`). */
export interface ConsumerRow {
  method: string;
  path: string;
  status: number;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  consumers: Map<string, StoredCalls>;
}

const KEY = 'project_id, row_id, method, path, status, day';

/**
 * Every row of consumer calls as reads see them (aliased by the caller): the keys' rows
 * (`consumer_calls`, merged) and the rows folds added since the row's last compaction
 * (`consumer_calls_added`, one per fold and key, only the consumers that fold counted). Reads sum
 * them, so a figure is the same whenever a compaction runs; a key's rows are several then, never
 * one per consumer. Conditions on the project, environment kind and endpoint reach both tables'
 * indexes (a `UNION ALL` subquery's conditions are pushed into each part).
 */
export const CONSUMER_CALLS = `(
  SELECT project_id, row_id, environment_kind, method, path, status, day, consumers FROM consumer_calls
  UNION ALL
  SELECT project_id, row_id, environment_kind, method, path, status, day, consumers FROM consumer_calls_added)`;

/** Each consumer of a row (`e`, of `c.consumers`) with its calls and last call, as columns of their own. */
const EACH = 'CROSS JOIN LATERAL jsonb_each(c.consumers) AS e';
const CALLS = `(e.value->>0)::bigint`;
/** The latest of the last calls summed up, as a time (stored as epoch milliseconds). */
const LAST_CALL = `to_timestamp(max((e.value->>1)::bigint) / 1000.0)`;

/**
 * The stored rows of a fold's keys `$3`–`$6` (method, path, status, day; distinct), locked until
 * the transaction ends, in key order as every writer locks them.
 */
export const LOCK_ROWS = `
  SELECT k.i::int AS i, c.consumers
    FROM (SELECT r.i, r.method, r.path, r.status, r.day
            FROM unnest($3::text[], $4::text[], $5::int[], $6::date[]) WITH ORDINALITY AS r(method, path, status, day, i)
           ORDER BY r.method COLLATE "C", r.path COLLATE "C", r.status, r.day) k
    JOIN LATERAL (
      SELECT consumers FROM consumer_calls c
       WHERE c.project_id = $1::uuid AND c.row_id = $2::uuid AND c.method = k.method AND c.path = k.path
         AND c.status = k.status AND c.day = k.day
       FOR UPDATE) c ON true`;

/**
 * Writes a fold's rows in key order, each with the consumers it changes only (their totals merged
 * in Node with the stored ones LOCK_ROWS found; the others stay as stored). Answers how many rows
 * it inserted, which must be those LOCK_ROWS did not find.
 */
const WRITE_ROWS = `
  WITH written AS (
    INSERT INTO consumer_calls AS c (${KEY}, environment_kind, consumers)
    SELECT $1::uuid, $2::uuid, r.method, r.path, r.status, r.day, $3::text, r.consumers::jsonb
      FROM unnest($4::text[], $5::text[], $6::int[], $7::date[], $8::text[]) AS r(method, path, status, day, consumers)
     ORDER BY r.method COLLATE "C", r.path COLLATE "C", r.status, r.day
    ON CONFLICT (${KEY}) DO UPDATE SET consumers = c.consumers || EXCLUDED.consumers
    RETURNING xmax = 0 AS inserted)
  SELECT count(*) FILTER (WHERE inserted)::int AS inserted FROM written`;

/**
 * Adds a fold's rows (`$4`… parallel arrays, one per endpoint, status and day, each with the calls
 * of the consumers the fold counted) to those waiting for the row's compaction: an insert, nothing
 * read or locked.
 */
const ADD_ROWS = `
  INSERT INTO consumer_calls_added (${KEY}, environment_kind, consumers)
  SELECT $1::uuid, $2::uuid, r.method, r.path, r.status, r.day, $3::text, r.consumers::jsonb
    FROM unnest($4::text[], $5::text[], $6::int[], $7::date[], $8::text[]) AS r(method, path, status, day, consumers)`;

/**
 * Takes the rows waiting for the compaction of environment row `$3` (of project `$1`, kind `$2`:
 * the index's prefix), deleted here, summed per key and consumer: one row per key, its consumers
 * as stored (`[calls, last call]`). Only compactions, in a fold of the row (which holds its lock)
 * or a regrouping (which holds the rows' locks), delete these rows.
 */
const TAKE_ADDED = `
  WITH taken AS (
    DELETE FROM consumer_calls_added
     WHERE project_id = $1::uuid AND environment_kind = $2::text AND row_id = $3::uuid
    RETURNING method, path, status, day, consumers
  ), summed AS (
    SELECT t.method, t.path, t.status, t.day, e.key AS consumer, sum((e.value->>0)::bigint) AS calls,
           max((e.value->>1)::bigint) AS at
      FROM taken t CROSS JOIN LATERAL jsonb_each(t.consumers) e
     GROUP BY t.method, t.path, t.status, t.day, e.key
  )
  SELECT method, path, status, to_char(day, 'YYYY-MM-DD') AS day, jsonb_object_agg(consumer, jsonb_build_array(calls, at)) AS consumers
    FROM summed GROUP BY method, path, status, day`;

/**
 * Moves the rows of paths `$2` (literals a learned or stated template `$3` covers) into the
 * template's, added to what those hold, for the environment rows `$4` (every row when null): no
 * literal stays here, as in the evidence (paths/regroup.service.ts). A merged row keeps the `$5`
 * named consumers with most calls, the others' calls go to `OTHER_CONSUMERS`. Answers how many
 * consumers' calls of a row moved.
 */
const REGROUP = `
  WITH moved AS (
    DELETE FROM consumer_calls
     WHERE project_id = $1::uuid AND path = ANY($2::text[]) AND ($4::uuid[] IS NULL OR row_id = ANY($4::uuid[]))
    RETURNING project_id, row_id, environment_kind, method, status, day, consumers
  ), calls AS (
    SELECT c.project_id, c.row_id, c.environment_kind, c.method, c.status, c.day, e.key AS consumer,
           ${CALLS} AS calls, (e.value->>1)::bigint AS at, true AS moved
      FROM moved c ${EACH}
    UNION ALL
    SELECT c.project_id, c.row_id, c.environment_kind, c.method, c.status, c.day, e.key, ${CALLS},
           (e.value->>1)::bigint, false
      FROM consumer_calls c ${EACH}
     WHERE c.project_id = $1::uuid AND c.path = $3::text
       AND (c.row_id, c.method, c.status, c.day) IN (SELECT row_id, method, status, day FROM moved)
  ), summed AS (
    SELECT project_id, row_id, environment_kind, method, status, day, consumer, sum(calls) AS calls, max(at) AS at,
           row_number() OVER (PARTITION BY row_id, method, status, day
                              ORDER BY consumer IN ('${ALL_CALLS}', '${OTHER_CONSUMERS}'), sum(calls) DESC, consumer) AS rank
      FROM calls GROUP BY project_id, row_id, environment_kind, method, status, day, consumer
  ), bounded AS (
    SELECT project_id, row_id, environment_kind, method, status, day,
           CASE WHEN consumer IN ('${ALL_CALLS}', '${OTHER_CONSUMERS}') OR rank <= $5 THEN consumer
                ELSE '${OTHER_CONSUMERS}' END AS consumer,
           sum(calls) AS calls, max(at) AS at
      FROM summed GROUP BY 1, 2, 3, 4, 5, 6, 7
  ), written AS (
    INSERT INTO consumer_calls AS c (${KEY}, environment_kind, consumers)
    SELECT project_id, row_id, method, $3::text, status, day, min(environment_kind),
           jsonb_object_agg(consumer, jsonb_build_array(calls, at))
      FROM bounded GROUP BY project_id, row_id, method, status, day
    ON CONFLICT (${KEY}) DO UPDATE SET consumers = EXCLUDED.consumers
  )
  SELECT count(*) FILTER (WHERE moved)::int AS moved FROM calls`;

/** REGROUP for the rows waiting for compactions (`consumer_calls_added`): they only add, so they move as they are. */
const REGROUP_ADDED = `
  WITH moved AS (
    UPDATE consumer_calls_added SET path = $3::text
     WHERE project_id = $1::uuid AND path = ANY($2::text[]) AND ($4::uuid[] IS NULL OR row_id = ANY($4::uuid[]))
    RETURNING consumers
  )
  SELECT coalesce(sum((SELECT count(*) FROM jsonb_object_keys(consumers))), 0)::int AS moved FROM moved`;

/** A consumer's calls `before` (none: undefined) with `calls` more, the last call the later one. */
export const addedCalls = (before: StoredCalls | undefined, [calls, at]: StoredCalls): StoredCalls =>
  before === undefined ? [calls, at] : [before[0] + calls, Math.max(before[1], at)];

/**
 * The changes a fold makes to one stored row (`stored`, empty when there is none): each consumer
 * it adds to, with its new totals; a new named consumer past MAX_CONSUMERS_PER_KEY adds to
 * `OTHER_CONSUMERS` instead.
 */
export function rowChanges(
  stored: StoredConsumers | undefined,
  added: ReadonlyMap<string, StoredCalls>,
): StoredConsumers {
  const changes: StoredConsumers = {};
  let named = 0;
  if (stored !== undefined)
    for (const consumer in stored) if (consumer !== ALL_CALLS && consumer !== OTHER_CONSUMERS) named++;
  const add = (consumer: string, calls: StoredCalls): void => {
    changes[consumer] = addedCalls(changes[consumer] ?? stored?.[consumer], calls);
  };
  for (const [consumer, calls] of added) {
    if (consumer === ALL_CALLS || consumer === OTHER_CONSUMERS || stored?.[consumer] !== undefined)
      add(consumer, calls);
    else if (named < MAX_CONSUMERS_PER_KEY) {
      named++;
      add(consumer, calls);
    } else add(OTHER_CONSUMERS, calls);
  }
  return changes;
}

/** A row's key (endpoint, status and day) in a map. */
const rowKey = (r: Pick<ConsumerRow, 'method' | 'path' | 'status' | 'day'>): string =>
  `${r.method}\u0000${r.path}\u0000${r.status}\u0000${r.day}`;

/** The keys of `rows` as LOCK_ROWS, WRITE_ROWS and ADD_ROWS take them: method, path, status and day arrays. */
const keysOf = (rows: readonly ConsumerRow[]): string[] => [
  textArrayLiteral(rows.map((r) => r.method)),
  textArrayLiteral(rows.map((r) => r.path)),
  integerArrayLiteral(rows.map((r) => r.status)),
  textArrayLiteral(rows.map((r) => r.day)),
];

/** The SQL of consumers (`consumer_calls`, `consumer_labels`), raw SQL in one style. */
@Injectable()
export class ConsumersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Adds a fold's rows (one per endpoint, status and day: `consumerRows`) to an environment row's,
   * in the fold's transaction, which holds that row's lock: inserted among those waiting for the
   * row's compaction (`ADD_ROWS`, nothing read), or, when `compact`, merged at once with those
   * waiting into the row's keys (`compact`).
   */
  async addRows(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    row: { id: string; kind: MatrixKind },
    rows: readonly ConsumerRow[],
    compact: boolean,
  ): Promise<void> {
    if (compact) return this.compact(manager, projectId, row, rows);
    if (rows.length === 0) return;
    // Arrays as literals (textArrayLiteral): pg's generic encoding costs a regular expression per element.
    // A named prepared statement (every fold runs it): parsed once per connection, not per fold.
    await queryPrepared(manager, 'spectator_consumers_add', ADD_ROWS, [
      projectId,
      row.id,
      row.kind,
      ...keysOf(rows),
      textArrayLiteral(rows.map((r) => JSON.stringify(Object.fromEntries(r.consumers)))),
    ]);
  }

  /**
   * Merges the rows waiting for environment row `row`'s compaction (`TAKE_ADDED`), and `more` (a
   * fold's, not inserted), into the row's keys in `consumer_calls`, in a transaction that holds the
   * row's lock (its fold's, or a regrouping's): the stored rows are read and locked, the changed
   * consumers' totals merged here (`rowChanges`: the bound of named consumers a key keeps applies
   * here), and every row written in one statement. Only folds and regroupings, which hold the row's
   * lock, write a row's counts; should a row appear between the read and the write all the same,
   * the transaction fails (the fold is folded again later) rather than lose what that row held.
   */
  async compact(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    row: { id: string; kind: MatrixKind },
    more: readonly ConsumerRow[] = [],
  ): Promise<void> {
    const taken = await queryPrepared<{
      method: string;
      path: string;
      status: number;
      day: string;
      consumers: StoredConsumers;
    }>(manager, 'spectator_consumers_take', TAKE_ADDED, [projectId, row.kind, row.id]);
    const byKey = new Map<string, ConsumerRow>();
    for (const r of taken)
      byKey.set(rowKey(r), {
        method: r.method,
        path: r.path,
        status: r.status,
        day: r.day,
        consumers: new Map(Object.entries(r.consumers)),
      });
    for (const r of more) {
      const before = byKey.get(rowKey(r));
      if (before === undefined) byKey.set(rowKey(r), r);
      else
        for (const [consumer, calls] of r.consumers)
          before.consumers.set(consumer, addedCalls(before.consumers.get(consumer), calls));
    }
    const rows = [...byKey.values()];
    if (rows.length === 0) return;
    const keys = keysOf(rows);
    // Named prepared statements (every compaction runs both): parsed once per connection.
    const found = await queryPrepared<{ i: number; consumers: StoredConsumers }>(
      manager,
      'spectator_consumers_lock',
      LOCK_ROWS,
      [projectId, row.id, ...keys],
    );
    const stored: Array<StoredConsumers | undefined> = [];
    for (const { i, consumers } of found) stored[i - 1] = consumers;
    const [written] = await queryPrepared<{ inserted: number }>(manager, 'spectator_consumers_write', WRITE_ROWS, [
      projectId,
      row.id,
      row.kind,
      ...keys,
      textArrayLiteral(rows.map((r, i) => JSON.stringify(rowChanges(stored[i], r.consumers)))),
    ]);
    if (written?.inserted !== rows.length - found.length)
      throw new Error(
        `consumer calls appeared while a fold wrote them (${rows.length - found.length} rows new when read, ${written?.inserted} when written)`,
      );
  }

  /**
   * Moves the rows of `literals` into `template` (see REGROUP), in the regrouping's transaction.
   * @returns how many consumers' calls of a row moved.
   */
  async regroup(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    const [{ moved }] = (await manager.query(REGROUP, [
      projectId,
      literals,
      template,
      rowIds,
      MAX_CONSUMERS_PER_KEY,
    ])) as [{ moved: number }];
    const [{ moved: waiting }] = (await manager.query(REGROUP_ADDED, [projectId, literals, template, rowIds])) as [
      { moved: number },
    ];
    return moved + waiting;
  }

  /** Deletes days before `before` (`YYYY-MM-DD`). @returns how many rows (endpoint, status and day of a build). */
  async prune(before: string): Promise<number> {
    // The rows waiting for a compaction go by day too, and with their project (they have no foreign key).
    const [{ deleted }] = (await this.db.query(
      `WITH pruned AS (DELETE FROM consumer_calls WHERE day < $1::date RETURNING 1),
            waiting AS (DELETE FROM consumer_calls_added a
                         WHERE a.day < $1::date OR NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = a.project_id)
                        RETURNING 1)
       SELECT (SELECT count(*) FROM pruned)::int + (SELECT count(*) FROM waiting)::int AS deleted`,
      [before],
    )) as [{ deleted: number }];
    return deleted;
  }

  /**
   * Per consumer (and `*`, `+`), a project's calls in an environment (or one of its rows, `rowId`)
   * since `since`, with how many endpoints each called (summed per endpoint first: hashed, where
   * `count(DISTINCT …)` sorted every consumer's calls of every day, 5 times as long on 30 days).
   */
  consumersOf(
    projectId: string,
    kind: MatrixKind,
    since: string,
    rowId: string | null,
  ): Promise<Array<ConsumerSum & { endpoints: number }>> {
    return this.db.query(
      `SELECT consumer, sum(calls)::text AS calls, to_timestamp(max(at) / 1000.0) AS "lastCall", count(*)::int AS endpoints
         FROM (SELECT e.key AS consumer, sum(${CALLS}) AS calls, max((e.value->>1)::bigint) AS at
                 FROM ${CONSUMER_CALLS} c ${EACH}
                WHERE c.project_id = $1 AND c.environment_kind = $2 AND c.day >= $3::date
                  AND ($4::uuid IS NULL OR c.row_id = $4)
                GROUP BY e.key, c.method, c.path) endpoint
        GROUP BY consumer
        ORDER BY sum(calls) DESC, consumer
        LIMIT 10000`,
      [projectId, kind, since, rowId],
    );
  }

  /** The rows (builds) of an environment with calls counted since `since`, newest call first, at most `limit`. */
  buildsOf(
    projectId: string,
    kind: MatrixKind,
    since: string,
    limit: number,
  ): Promise<Array<Omit<ConsumerSum, 'consumer'> & { build: string }>> {
    return this.db.query(
      `SELECT r.name AS build, sum((c.consumers->'${ALL_CALLS}'->>0)::bigint)::text AS calls,
              to_timestamp(max((c.consumers->'${ALL_CALLS}'->>1)::bigint) / 1000.0) AS "lastCall"
         FROM ${CONSUMER_CALLS} c JOIN environment_rows r ON r.id = c.row_id
        WHERE c.project_id = $1 AND c.environment_kind = $2 AND c.day >= $3::date AND c.consumers ? '${ALL_CALLS}'
        GROUP BY r.name
        ORDER BY max((c.consumers->'${ALL_CALLS}'->>1)::bigint) DESC, r.name
        LIMIT $4`,
      [projectId, kind, since, limit],
    );
  }

  /** The id of the row of an environment named `name` (a build; `PR #n` for CI), null when it has none. */
  async rowOf(projectId: string, kind: MatrixKind, name: string): Promise<string | null> {
    const [row] = (await this.db.query(
      'SELECT id FROM environment_rows WHERE project_id = $1 AND kind = $2 AND name = $3',
      [projectId, kind, name],
    )) as Array<{ id: string }>;
    return row?.id ?? null;
  }

  /**
   * One endpoint's calls since `since` per environment kind (one, or every one), status and
   * consumer; only those of row `rowId` when not null.
   */
  endpointCalls(
    projectId: string,
    route: { method: string; path: string },
    kind: MatrixKind | null,
    since: string,
    rowId: string | null,
  ): Promise<Array<ConsumerSum & { environment: MatrixKind; status: number }>> {
    return this.db.query(
      `SELECT c.environment_kind AS environment, c.status, e.key AS consumer, sum(${CALLS})::text AS calls,
              ${LAST_CALL} AS "lastCall"
         FROM ${CONSUMER_CALLS} c ${EACH}
        WHERE c.project_id = $1 AND c.method = $2 AND c.path = $3 AND ($4::text IS NULL OR c.environment_kind = $4)
          AND c.day >= $5::date AND ($6::uuid IS NULL OR c.row_id = $6)
        GROUP BY c.environment_kind, c.status, e.key
        ORDER BY c.environment_kind, c.status, sum(${CALLS}) DESC, e.key`,
      [projectId, route.method, route.path, kind, since, rowId],
    );
  }

  /**
   * Per part (method, path, and a status or any when null; numbered from 1 in the order given), the
   * calls of each consumer (and `*`, `+`) in an environment (or one of its rows, `rowId`) since `since`.
   */
  partCalls(
    projectId: string,
    parts: ReadonlyArray<{ method: string; path: string; status: number | null }>,
    kind: MatrixKind,
    since: string,
    rowId: string | null,
  ): Promise<Array<ConsumerSum & { part: number }>> {
    if (parts.length === 0) return Promise.resolve([]);
    return this.db.query(
      `SELECT p.part::int AS part, e.key AS consumer, sum(${CALLS})::text AS calls, ${LAST_CALL} AS "lastCall"
         FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS p(method, path, status, part)
         JOIN ${CONSUMER_CALLS} c
           ON c.project_id = $1 AND c.environment_kind = $5 AND c.method = p.method AND c.path = p.path
          AND (p.status IS NULL OR c.status = p.status) AND c.day >= $6::date AND ($7::uuid IS NULL OR c.row_id = $7)
         ${EACH}
        GROUP BY p.part, e.key
        ORDER BY p.part, sum(${CALLS}) DESC, e.key`,
      [projectId, parts.map((p) => p.method), parts.map((p) => p.path), parts.map((p) => p.status), kind, since, rowId],
    );
  }

  labels(projectId: string): Promise<LabelRow[]> {
    return this.db.query(
      `SELECT consumer, label, updated_by AS "updatedBy", updated_at AS "updatedAt"
         FROM consumer_labels WHERE project_id = $1 ORDER BY label, consumer`,
      [projectId],
    );
  }

  async setLabel(projectId: string, consumer: string, label: string, by: string | null): Promise<LabelRow> {
    const [row] = (await this.db.query(
      `INSERT INTO consumer_labels (project_id, consumer, label, updated_by, updated_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (project_id, consumer) DO UPDATE SET label = EXCLUDED.label, updated_by = EXCLUDED.updated_by,
              updated_at = EXCLUDED.updated_at
       RETURNING consumer, label, updated_by AS "updatedBy", updated_at AS "updatedAt"`,
      [projectId, consumer, label, by],
    )) as LabelRow[];
    return row as LabelRow;
  }

  /** @returns whether there was a label to remove. */
  async removeLabel(projectId: string, consumer: string): Promise<boolean> {
    const [{ deleted }] = (await this.db.query(
      `WITH removed AS (DELETE FROM consumer_labels WHERE project_id = $1 AND consumer = $2 RETURNING 1)
       SELECT count(*)::int AS deleted FROM removed`,
      [projectId, consumer],
    )) as [{ deleted: number }];
    return deleted > 0;
  }
}
