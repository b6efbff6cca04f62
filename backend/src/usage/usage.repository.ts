import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DeprecationLocation, DeprecationResponse, MatrixKind } from '@spectator/shared';
import type { DataSource } from 'typeorm';

/** An endpoint by method and path template. */
export interface EndpointKey {
  method: string;
  path: string;
}

/** One distinct exchange an environment kind's evidence keeps, with when it was last seen. */
export interface UsageExchangeRow {
  method: string;
  path: string;
  status: number;
  requestShape: string | null;
  responseShape: string | null;
  query: string[] | null;
  requestHeaders: string[] | null;
  lastSeen: Date;
}

/** A response header name an environment kind's captures saw on an endpoint, and when last. */
export interface ResponseHeaderRow {
  method: string;
  path: string;
  name: string;
  lastSeen: Date;
}

/** When an environment kind's evidence last saw an endpoint. */
export interface EndpointLastSeenRow extends EndpointKey {
  lastSeen: Date;
}

/** Whose evidence a read covers: an environment kind, or one of its rows (a build; `PR #n` for a CI run) by name. */
export interface RowScope {
  kind: MatrixKind;
  /** The row's name, null for every row of the kind. */
  name: string | null;
}

/** A capture's environment identity, from which its row's name follows (`environmentRowOf`). */
export interface CaptureEnvironmentRow {
  id: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
}

/** A mark that something is deprecated, as stored. */
export type DeprecationRow = Omit<DeprecationResponse, 'createdAt'> & { createdAt: Date };

/**
 * `AND (alias.method, alias.path) IN (…)` over the keys given as parameters `$m` and `$m+1`
 * (two text arrays), or nothing when every endpoint is read.
 */
function keysFilter(alias: string, keys: readonly EndpointKey[] | undefined, first: number): string {
  return keys === undefined
    ? ''
    : ` AND (${alias}.method, ${alias}.path) IN (SELECT * FROM unnest($${first}::text[], $${first + 1}::text[]))`;
}

function keysParameters(keys: readonly EndpointKey[] | undefined): unknown[] {
  return keys === undefined ? [] : [keys.map((k) => k.method), keys.map((k) => k.path)];
}

/**
 * The reads of usage: the distinct exchanges each environment kind's evidence keeps (kept as long
 * as the project: last seen per endpoint, status, body fields, query and request header names),
 * response header names from the captures' observations (kept as long as the captures), and the
 * deprecation marks (the one table it writes). Reads that take
 * `keys` read only those endpoints (a page, or the ones a question is about).
 */
@Injectable()
export class UsageRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * One page of the endpoints usage lists for a kind (documented, or seen by its evidence), by
   * path then method in byte order, after `after` (excluded), at most `limit` (all when undefined).
   */
  keys(
    projectId: string,
    scope: RowScope,
    after: EndpointKey | undefined,
    limit: number | undefined,
  ): Promise<EndpointKey[]> {
    return this.db.query(
      `SELECT k.method, k.path FROM (
         SELECT DISTINCT o.method, o.path FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id
          WHERE o.project_id = $1 AND r.kind = $2 AND ($6::text IS NULL OR r.name = $6)
         UNION
         SELECT e.method, e.path FROM endpoints e WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
       ) k
       WHERE $3::text IS NULL OR (k.path COLLATE "C", k.method COLLATE "C") > ($3::text COLLATE "C", $4::text COLLATE "C")
       ORDER BY k.path COLLATE "C", k.method COLLATE "C"
       LIMIT $5`,
      [projectId, scope.kind, after?.path ?? null, after?.method ?? null, limit ?? null, scope.name],
    );
  }

  /** Every distinct exchange of a kind's environment rows, or of one (of `keys` only, when given). */
  exchanges(projectId: string, scope: RowScope, keys?: readonly EndpointKey[]): Promise<UsageExchangeRow[]> {
    return this.db.query(
      `SELECT o.method, o.path, o.status, o.request_shape AS "requestShape", o.response_shape AS "responseShape",
              o.query, o.request_headers AS "requestHeaders", o.last_seen AS "lastSeen"
         FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id
        WHERE o.project_id = $1 AND r.kind = $2 AND ($3::text IS NULL OR r.name = $3)${keysFilter('o', keys, 4)}`,
      [projectId, scope.kind, scope.name, ...keysParameters(keys)],
    );
  }

  /** When a kind's evidence (a row's) last saw each endpoint: one aggregate, no shapes read. */
  lastSeen(projectId: string, scope: RowScope): Promise<EndpointLastSeenRow[]> {
    return this.db.query(
      `SELECT o.method, o.path, max(o.last_seen) AS "lastSeen"
         FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id
        WHERE o.project_id = $1 AND r.kind = $2 AND ($3::text IS NULL OR r.name = $3)
        GROUP BY o.method, o.path`,
      [projectId, scope.kind, scope.name],
    );
  }

  /** Whether the kind has a row of this name. */
  async hasRow(projectId: string, scope: RowScope): Promise<boolean> {
    const [row] = (await this.db.query(
      'SELECT EXISTS (SELECT 1 FROM environment_rows WHERE project_id = $1 AND kind = $2 AND name = $3) AS found',
      [projectId, scope.kind, scope.name],
    )) as Array<{ found: boolean }>;
    return row?.found === true;
  }

  /** The captures of a kind, with what names their row. */
  capturesOf(projectId: string, kind: MatrixKind): Promise<CaptureEnvironmentRow[]> {
    return this.db.query(
      `SELECT id, pull_request AS "pullRequest", build, commit FROM captures
        WHERE project_id = $1 AND environment_kind = $2`,
      [projectId, kind],
    );
  }

  /**
   * Response header names per endpoint seen by a kind's captures (those of `captures` only, when
   * not null), each with its last sighting: of `keys` only, and of the names `names` only, when given.
   */
  responseHeaders(
    projectId: string,
    where: { kind: MatrixKind; captures: readonly string[] | null },
    keys?: readonly EndpointKey[],
    names?: readonly string[],
  ): Promise<ResponseHeaderRow[]> {
    const nameFilter = names === undefined ? '' : ` AND h.name = ANY($${keys === undefined ? 4 : 6}::text[])`;
    return this.db.query(
      `SELECT o.method, o.path, h.name, max(o.last_seen) AS "lastSeen"
         FROM captures c
         JOIN observations o ON o.capture_id = c.id AND o.project_id = c.project_id AND o.capture_created_at = c.created_at
        CROSS JOIN LATERAL unnest(o.response_headers) AS h(name)
        WHERE c.project_id = $1 AND c.environment_kind = $2 AND ($3::uuid[] IS NULL OR c.id = ANY($3::uuid[]))${keysFilter('o', keys, 4)}${nameFilter}
        GROUP BY o.method, o.path, h.name`,
      [projectId, where.kind, where.captures, ...keysParameters(keys), ...(names === undefined ? [] : [names])],
    );
  }

  /** When any traffic of an environment kind was last seen (its newest environment row). */
  async lastSeenAny(projectId: string, kind: MatrixKind): Promise<Date | null> {
    const [row] = (await this.db.query(
      'SELECT max(last_seen) AS "lastSeen" FROM environment_rows WHERE project_id = $1 AND kind = $2',
      [projectId, kind],
    )) as Array<{ lastSeen: Date | null }>;
    return row?.lastSeen ?? null;
  }

  /** The project's deprecation marks, by path, method, location and name. */
  deprecations(projectId: string): Promise<DeprecationRow[]> {
    return this.db.query(
      `SELECT method, path, location, name, source, created_by AS "createdBy", created_at AS "createdAt"
         FROM deprecations WHERE project_id = $1 ORDER BY path, method, location, name`,
      [projectId],
    );
  }

  /** Marks (idempotent: a mark kept keeps its first author). @returns whether it is new. */
  async mark(projectId: string, mark: Omit<DeprecationRow, 'createdAt'>): Promise<boolean> {
    const rows = (await this.db.query(
      `INSERT INTO deprecations (project_id, method, path, location, name, source, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING 1`,
      [projectId, mark.method, mark.path, mark.location, mark.name, mark.source, mark.createdBy],
    )) as unknown[];
    return rows.length > 0;
  }

  /** @returns whether there was such a mark. */
  async unmark(
    projectId: string,
    mark: { method: string; path: string; location: DeprecationLocation; name: string },
  ): Promise<boolean> {
    const rows = (await this.db.query(
      `DELETE FROM deprecations WHERE project_id = $1 AND method = $2 AND path = $3 AND location = $4 AND name = $5 RETURNING 1`,
      [projectId, mark.method, mark.path, mark.location, mark.name],
    )) as unknown[];
    return rows.length > 0;
  }
}
