import type { EnvironmentKind, TokenScope } from '@spectator/shared';
import type { Queryable } from '../common/queryable';
import { returningRows } from '../common/returning';

/** A token as stored (`tokens`); the clear token is never stored, only its hash. */
export interface TokenRow {
  id: string;
  /** `null` only for the bootstrap admin token, which spans every project. */
  projectId: string | null;
  name: string;
  scope: TokenScope;
  /** Environment kinds an agent token may report; `null` = any. */
  environments: EnvironmentKind[] | null;
  /** SHA-256 (hex) of the token. */
  tokenHash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** The person who made the token; `null` when a token made it. */
  createdBy: string | null;
  /** When the token stops working on its own; `null` = never. */
  expiresAt: Date | null;
}

/** What a new token is made of; the database adds its id and creation time. */
export type NewToken = Pick<TokenRow, 'projectId' | 'name' | 'scope' | 'environments' | 'tokenHash'> &
  Partial<Pick<TokenRow, 'createdBy' | 'expiresAt'>>;

/** The columns of `TokenRow`. */
const COLUMNS = `id, project_id AS "projectId", name, scope, environments, token_hash AS "tokenHash",
  created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt", created_by AS "createdBy",
  expires_at AS "expiresAt"`;

/**
 * The SQL of tokens (`tokens`), raw SQL through `Queryable` as every other domain's: the service
 * passes its data source, the bootstrap admin token's transaction its manager.
 */
export const tokensRepository = {
  /** Inserts a token. @returns the stored row */
  async insert(db: Queryable, token: NewToken): Promise<TokenRow> {
    const [row] = (await db.query(
      `INSERT INTO tokens (project_id, name, scope, environments, token_hash, created_by, expires_at)
       VALUES ($1, $2, $3, $4::text[], $5, $6, $7) RETURNING ${COLUMNS}`,
      [
        token.projectId,
        token.name,
        token.scope,
        token.environments,
        token.tokenHash,
        token.createdBy ?? null,
        token.expiresAt ?? null,
      ],
    )) as TokenRow[];
    if (!row) throw new Error('token insert returned nothing');
    return row;
  },

  /** The tokens of a project, oldest first. */
  ofProject(db: Queryable, projectId: string): Promise<TokenRow[]> {
    return db.query(`SELECT ${COLUMNS} FROM tokens WHERE project_id = $1 ORDER BY created_at`, [projectId]);
  },

  async byHash(db: Queryable, tokenHash: string): Promise<TokenRow | null> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM tokens WHERE token_hash = $1`, [tokenHash])) as TokenRow[];
    return row ?? null;
  },

  /** Whether a hash is of a token that is not revoked. */
  async isActive(db: Queryable, tokenHash: string): Promise<boolean> {
    const rows = (await db.query('SELECT 1 FROM tokens WHERE token_hash = $1 AND revoked_at IS NULL', [
      tokenHash,
    ])) as unknown[];
    return rows.length > 0;
  },

  /** Revokes an active token of a project. @returns false when there is none with that id */
  async revoke(db: Queryable, projectId: string, tokenId: string, at: Date): Promise<boolean> {
    const rows = await returningRows<{ id: string }>(
      db,
      'UPDATE tokens SET revoked_at = $3 WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL RETURNING id',
      [tokenId, projectId, at],
    );
    return rows.length > 0;
  },

  /** Sets `last_used_at` to now, unless it was set less than a minute ago. */
  async touch(db: Queryable, id: string): Promise<void> {
    await db.query(
      `UPDATE tokens SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id],
    );
  },

  /**
   * Takes the lock that serialises making the bootstrap admin token until `db`'s transaction ends
   * (replicas may start together).
   */
  async lockAdminToken(db: Queryable): Promise<void> {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['spectator-admin-token']);
  },

  /** Whether an active bootstrap admin token (admin scope, no project) exists. */
  async hasActiveAdminToken(db: Queryable): Promise<boolean> {
    const rows = (await db.query(
      `SELECT 1 FROM tokens WHERE project_id IS NULL AND scope = 'admin' AND revoked_at IS NULL LIMIT 1`,
    )) as unknown[];
    return rows.length > 0;
  },

  /** Which of some tokens are revoked or expired (by the database's clock), and which of the two. */
  ended(
    db: Queryable,
    ids: readonly string[],
  ): Promise<Array<{ id: string; reason: 'token revoked' | 'token expired' }>> {
    return db.query(
      `SELECT id, CASE WHEN revoked_at IS NOT NULL THEN 'token revoked' ELSE 'token expired' END AS reason
         FROM tokens WHERE id = ANY($1::uuid[]) AND (revoked_at IS NOT NULL OR expires_at <= now())`,
      [ids],
    );
  },
};
