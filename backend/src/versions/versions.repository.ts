import type { EndpointShapes, ShapeChange, Version } from '@spectator/shared';
import type { Queryable } from '../common/queryable';

/** An endpoint row as a version writer reads it (locked by the upsert until the transaction ends). */
export interface LockedEndpoint {
  id: string;
  description: string;
  currentVersionId: string | null;
}

/** The documented behaviour of one endpoint version. */
export interface DocumentedVersion extends EndpointShapes {
  id: string;
  endpointId: string;
  major: number;
  minor: number;
  /** Made by a removal: traffic answered 404, 405 or 410 conforms to it, nothing else does. */
  removed: boolean;
}

/** A version a proposal made, with its endpoint and the version before it (null: the first). */
export interface MadeVersion {
  endpointId: string;
  method: string;
  path: string;
  major: number;
  minor: number;
  changes: ShapeChange[];
  removed: boolean;
  fromMajor: number | null;
  fromMinor: number | null;
}

/** An endpoint of a method and path, with its current version (null: not documented). */
export interface EndpointWithCurrent {
  method: string;
  path: string;
  endpointId: string;
  current: (EndpointShapes & Version & { removed: boolean }) | null;
}

/** A documented endpoint as other domains refer to it. */
export interface EndpointRef {
  id: string;
  method: string;
  path: string;
}

/** A documented endpoint with its current version's number (`1.2`). */
export interface DocumentedCurrent {
  endpointId: string;
  method: string;
  path: string;
  version: string;
  /** The current version removed the endpoint. */
  removed: boolean;
}

/** A version's id and number, with its endpoint. */
export interface VersionNumber {
  id: string;
  endpointId: string;
  major: number;
  minor: number;
}

/** A version a proposal made: its endpoint and number. */
export interface ProposalVersion {
  proposalId: string;
  endpointId: string;
  major: number;
  minor: number;
}

/** A version to insert. */
export interface NewVersion {
  endpointId: string;
  version: Version;
  description: string;
  documented: EndpointShapes;
  changes: readonly ShapeChange[];
  proposalId: string;
  removed: boolean;
}

/**
 * The SQL of endpoint versions and of the endpoint rows that point at them, in one style (raw SQL
 * through `Queryable`, so writers run it in their transaction). Callers: the version writer and
 * the version store (through which other domains read documented endpoints and versions).
 */
export const versionsRepository = {
  /** Upserts the endpoint row of a method and path, which locks it until the transaction ends. */
  async lockEndpoint(db: Queryable, projectId: string, method: string, path: string): Promise<LockedEndpoint> {
    const [endpoint] = (await db.query(
      `INSERT INTO endpoints AS e (project_id, method, path) VALUES ($1, $2, $3)
       ON CONFLICT ON CONSTRAINT endpoints_method_path_unique DO UPDATE SET updated_at = e.updated_at
       RETURNING e.id, e.description, e.current_version_id AS "currentVersionId"`,
      [projectId, method, path],
    )) as LockedEndpoint[];
    if (!endpoint) throw new Error('endpoint upsert returned nothing');
    return endpoint;
  },

  /** The endpoint row of a method and path, without creating or locking it; null when there is none. */
  async findEndpoint(db: Queryable, projectId: string, method: string, path: string): Promise<LockedEndpoint | null> {
    const [endpoint] = (await db.query(
      `SELECT id, description, current_version_id AS "currentVersionId" FROM endpoints
        WHERE project_id = $1 AND method = $2 AND path = $3`,
      [projectId, method, path],
    )) as LockedEndpoint[];
    return endpoint ?? null;
  },

  /** The number and shapes of one version, or null when there is no such version. */
  async shapesOf(db: Queryable, versionId: string): Promise<(EndpointShapes & Version & { removed: boolean }) | null> {
    const [version] = (await db.query(
      'SELECT major, minor, request, responses, parameters, removed FROM endpoint_versions WHERE id = $1',
      [versionId],
    )) as Array<EndpointShapes & Version & { removed: boolean }>;
    return version ?? null;
  },

  /** Versions by id (those that exist). */
  byIds(db: Queryable, ids: readonly string[]): Promise<DocumentedVersion[]> {
    return db.query(
      `SELECT id, endpoint_id AS "endpointId", major, minor, request, responses, parameters, removed FROM endpoint_versions WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  },

  async setDescription(db: Queryable, endpointId: string, description: string): Promise<void> {
    await db.query('UPDATE endpoints SET description = $2, updated_at = now() WHERE id = $1', [
      endpointId,
      description,
    ]);
  },

  /** Inserts a version and makes it the endpoint's current one. @returns the version's id. */
  async insertCurrent(db: Queryable, version: NewVersion): Promise<string> {
    const [written] = (await db.query(
      `INSERT INTO endpoint_versions (project_id, endpoint_id, major, minor, description, request, responses, parameters, changes, proposal_id, removed)
       SELECT project_id, id, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM endpoints WHERE id = $1 RETURNING id`,
      [
        version.endpointId,
        version.version.major,
        version.version.minor,
        version.description,
        JSON.stringify(version.documented.request),
        JSON.stringify(version.documented.responses),
        version.documented.parameters ? JSON.stringify(version.documented.parameters) : null,
        JSON.stringify(version.changes),
        version.proposalId,
        version.removed,
      ],
    )) as Array<{ id: string }>;
    if (!written) throw new Error('version insert returned nothing');
    await db.query('UPDATE endpoints SET current_version_id = $2, description = $3, updated_at = now() WHERE id = $1', [
      version.endpointId,
      written.id,
      version.description,
    ]);
    return written.id;
  },

  /** The path templates of a project's documented endpoints, sorted, each once. */
  async documentedPaths(db: Queryable, projectId: string): Promise<string[]> {
    const rows = (await db.query(
      'SELECT DISTINCT path FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL ORDER BY path',
      [projectId],
    )) as Array<{ path: string }>;
    return rows.map((row) => row.path);
  },

  /** The documented endpoints of a project, by path then method (the matrix's columns). */
  documented(db: Queryable, projectId: string): Promise<EndpointRef[]> {
    return db.query(
      'SELECT id, method, path FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL ORDER BY path, method',
      [projectId],
    );
  },

  /** A project's documented endpoints at their current version (of `keys` only, when given), by path then method. */
  documentedCurrent(
    db: Queryable,
    projectId: string,
    keys: ReadonlyArray<{ method: string; path: string }> | undefined,
  ): Promise<DocumentedCurrent[]> {
    const among = keys === undefined ? '' : ' AND (e.method, e.path) IN (SELECT * FROM unnest($2::text[], $3::text[]))';
    return db.query(
      `SELECT e.id AS "endpointId", e.method, e.path, v.major || '.' || v.minor AS version, v.removed
         FROM endpoints e JOIN endpoint_versions v ON v.id = e.current_version_id
        WHERE e.project_id = $1${among} ORDER BY e.path, e.method`,
      [projectId, ...(keys === undefined ? [] : [keys.map((k) => k.method), keys.map((k) => k.path)])],
    );
  },

  /** The documented endpoints of a project among some methods and paths, in id order. */
  documentedAmong(
    db: Queryable,
    projectId: string,
    keys: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<EndpointRef[]> {
    return db.query(
      `SELECT e.id, e.method, e.path FROM endpoints e
         JOIN jsonb_to_recordset($2::jsonb) AS t(method text, path text) ON e.method = t.method AND e.path = t.path
        WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
        ORDER BY e.id`,
      [projectId, JSON.stringify(keys)],
    );
  },

  /** The documented endpoints of a project at one path, in id order. */
  documentedAt(db: Queryable, projectId: string, path: string): Promise<EndpointRef[]> {
    return db.query(
      'SELECT id, method, path FROM endpoints WHERE project_id = $1 AND path = $2 AND current_version_id IS NOT NULL ORDER BY id',
      [projectId, path],
    );
  },

  /** A project's endpoints by id (those that exist), in id order. */
  endpointsByIds(db: Queryable, projectId: string, ids: readonly string[]): Promise<EndpointRef[]> {
    return db.query(
      'SELECT id, method, path FROM endpoints WHERE id = ANY($2::uuid[]) AND project_id = $1 ORDER BY id',
      [projectId, ids],
    );
  },

  /** The id of a project's endpoint `method path` (documented or not), or null when it has none. */
  async endpointIdOf(db: Queryable, projectId: string, method: string, path: string): Promise<string | null> {
    const [row] = (await db.query('SELECT id FROM endpoints WHERE project_id = $1 AND method = $2 AND path = $3', [
      projectId,
      method,
      path,
    ])) as Array<{ id: string }>;
    return row?.id ?? null;
  },

  /** Those of the endpoints `ids` whose only version is their current one (documented for the first time). */
  async firstDocumented(db: Queryable, ids: readonly string[]): Promise<string[]> {
    const rows = (await db.query(
      `SELECT e.id FROM endpoints e
        WHERE e.id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM endpoint_versions v WHERE v.endpoint_id = e.id AND v.id <> e.current_version_id)`,
      [ids],
    )) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  },

  /** Every version of some endpoints, id and number. */
  versionsOf(db: Queryable, endpointIds: readonly string[]): Promise<VersionNumber[]> {
    return db.query(
      `SELECT id, endpoint_id AS "endpointId", major, minor FROM endpoint_versions WHERE endpoint_id = ANY($1::uuid[])`,
      [endpointIds],
    );
  },

  /** The proposals that made a version of one of the endpoints `endpointIds`, each once. */
  async proposalsVersioning(db: Queryable, endpointIds: readonly string[]): Promise<string[]> {
    const rows = (await db.query(
      `SELECT DISTINCT proposal_id AS id FROM endpoint_versions WHERE endpoint_id = ANY($1::uuid[]) AND proposal_id IS NOT NULL`,
      [endpointIds],
    )) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  },

  /** Every version the proposals `proposalIds` made. */
  madeByProposals(db: Queryable, proposalIds: readonly string[]): Promise<ProposalVersion[]> {
    return db.query(
      `SELECT proposal_id AS "proposalId", endpoint_id AS "endpointId", major, minor FROM endpoint_versions WHERE proposal_id = ANY($1::uuid[])`,
      [proposalIds],
    );
  },

  /** The versions proposal `proposalId` made, each with the one before it, by path then method. */
  madeBy(db: Queryable, proposalId: string): Promise<MadeVersion[]> {
    return db.query(
      `SELECT v.endpoint_id AS "endpointId", e.method, e.path, v.major, v.minor, v.changes, v.removed, prev.major AS "fromMajor", prev.minor AS "fromMinor"
           FROM endpoint_versions v JOIN endpoints e ON e.id = v.endpoint_id
           LEFT JOIN LATERAL (SELECT p.major, p.minor FROM endpoint_versions p
                               WHERE p.endpoint_id = v.endpoint_id AND (p.major, p.minor) < (v.major, v.minor)
                               ORDER BY p.major DESC, p.minor DESC LIMIT 1) prev ON true
          WHERE v.proposal_id = $1
          ORDER BY e.path, e.method`,
      [proposalId],
    );
  },

  /** The endpoints of project `projectId` with these methods and paths (those that exist), each with its current version. */
  withCurrent(
    db: Queryable,
    projectId: string,
    keys: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<EndpointWithCurrent[]> {
    return db.query(
      `SELECT e.method, e.path, e.id AS "endpointId",
              CASE WHEN v.id IS NULL THEN NULL ELSE jsonb_build_object('major', v.major, 'minor', v.minor, 'request', v.request, 'responses', v.responses, 'parameters', v.parameters, 'removed', v.removed) END AS current
         FROM unnest($2::text[], $3::text[]) AS k(method, path)
         JOIN endpoints e ON e.project_id = $1 AND e.method = k.method AND e.path = k.path
         LEFT JOIN endpoint_versions v ON v.id = e.current_version_id`,
      [projectId, keys.map((key) => key.method), keys.map((key) => key.path)],
    );
  },
};
