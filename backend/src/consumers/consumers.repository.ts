import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { MatrixKind } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';

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

const KEY = 'project_id, row_id, method, path, status, consumer, day';
const ADD = `calls = c.calls + EXCLUDED.calls, last_call = greatest(c.last_call, EXCLUDED.last_call)`;

/**
 * Adds consumer days to one environment row's, in one statement in key order. Only the fold of the
 * row's queued evidence (which holds the row) and regrouping (which locks it first) write a row's
 * counts: no other transaction waits on them.
 */
const ADD_DAYS = `
  INSERT INTO consumer_calls AS c (${KEY}, environment_kind, calls, last_call)
  SELECT $1::uuid, $2::uuid, r.method, r.path, r.status, r.consumer, r.day, $3::text, r.calls, r.last_call
    FROM unnest($4::text[], $5::text[], $6::int[], $7::text[], $8::date[], $9::bigint[], $10::timestamptz[])
         AS r(method, path, status, consumer, day, calls, last_call)
   ORDER BY r.method COLLATE "C", r.path COLLATE "C", r.status, r.consumer COLLATE "C", r.day
  ON CONFLICT (${KEY}) DO UPDATE SET ${ADD}`;

/**
 * Moves the rows of paths `$2` (literals a learned or stated template `$3` covers) into the
 * template's, added to what those hold, for the environment rows `$4` (every row when null): no
 * literal stays here, as in the evidence (paths/regroup.service.ts).
 */
const REGROUP = `
  WITH moved AS (
    DELETE FROM consumer_calls
     WHERE project_id = $1::uuid AND path = ANY($2::text[]) AND ($4::uuid[] IS NULL OR row_id = ANY($4::uuid[]))
    RETURNING *
  ), written AS (
    INSERT INTO consumer_calls AS c (${KEY}, environment_kind, calls, last_call)
    SELECT project_id, row_id, method, $3::text, status, consumer, day, min(environment_kind), sum(calls), max(last_call)
      FROM moved
     GROUP BY project_id, row_id, method, status, consumer, day
    ON CONFLICT (${KEY}) DO UPDATE SET ${ADD}
  )
  SELECT count(*)::int AS moved FROM moved`;

/** The SQL of consumers (`consumer_calls`, `consumer_labels`), raw SQL in one style. */
@Injectable()
export class ConsumersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Adds consumer days (one per key) to an environment row's, in the transaction of the row's fold. */
  async addDays(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    row: { id: string; kind: MatrixKind },
    days: readonly ConsumerDay[],
  ): Promise<void> {
    if (days.length === 0) return;
    await manager.query(ADD_DAYS, [
      projectId,
      row.id,
      row.kind,
      days.map((d) => d.method),
      days.map((d) => d.path),
      days.map((d) => d.status),
      days.map((d) => d.consumer),
      days.map((d) => d.day),
      days.map((d) => d.calls),
      days.map((d) => d.lastCall),
    ]);
  }

  /** Moves the rows of `literals` into `template` (see REGROUP), in the regrouping's transaction. @returns how many. */
  async regroup(
    manager: Pick<EntityManager, 'query'>,
    projectId: string,
    rowIds: readonly string[] | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    const [{ moved }] = (await manager.query(REGROUP, [projectId, literals, template, rowIds])) as [{ moved: number }];
    return moved;
  }

  /** Deletes days before `before` (`YYYY-MM-DD`). @returns how many rows. */
  async prune(before: string): Promise<number> {
    const [{ deleted }] = (await this.db.query(
      `WITH pruned AS (DELETE FROM consumer_calls WHERE day < $1::date RETURNING 1)
       SELECT count(*)::int AS deleted FROM pruned`,
      [before],
    )) as [{ deleted: number }];
    return deleted;
  }

  /**
   * Per consumer (and `*`, `+`), a project's calls in an environment (or one of its rows, `rowId`)
   * since `since`, with how many endpoints each called.
   */
  consumersOf(
    projectId: string,
    kind: MatrixKind,
    since: string,
    rowId: string | null,
  ): Promise<Array<ConsumerSum & { endpoints: number }>> {
    return this.db.query(
      `SELECT consumer, sum(calls)::text AS calls, max(last_call) AS "lastCall",
              count(DISTINCT (method, path))::int AS endpoints
         FROM consumer_calls
        WHERE project_id = $1 AND environment_kind = $2 AND day >= $3::date AND ($4::uuid IS NULL OR row_id = $4)
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
      `SELECT r.name AS build, sum(c.calls)::text AS calls, max(c.last_call) AS "lastCall"
         FROM consumer_calls c JOIN environment_rows r ON r.id = c.row_id
        WHERE c.project_id = $1 AND c.environment_kind = $2 AND c.day >= $3::date AND c.consumer = '${ALL_CALLS}'
        GROUP BY r.name
        ORDER BY max(c.last_call) DESC, r.name
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
      `SELECT environment_kind AS environment, status, consumer, sum(calls)::text AS calls, max(last_call) AS "lastCall"
         FROM consumer_calls
        WHERE project_id = $1 AND method = $2 AND path = $3 AND ($4::text IS NULL OR environment_kind = $4)
          AND day >= $5::date AND ($6::uuid IS NULL OR row_id = $6)
        GROUP BY environment_kind, status, consumer
        ORDER BY environment_kind, status, sum(calls) DESC, consumer`,
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
      `SELECT p.part::int AS part, c.consumer, sum(c.calls)::text AS calls, max(c.last_call) AS "lastCall"
         FROM unnest($2::text[], $3::text[], $4::int[]) WITH ORDINALITY AS p(method, path, status, part)
         JOIN consumer_calls c
           ON c.project_id = $1 AND c.environment_kind = $5 AND c.method = p.method AND c.path = p.path
          AND (p.status IS NULL OR c.status = p.status) AND c.day >= $6::date AND ($7::uuid IS NULL OR c.row_id = $7)
        GROUP BY p.part, c.consumer
        ORDER BY p.part, sum(c.calls) DESC, c.consumer`,
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
