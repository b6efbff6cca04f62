import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { returningRows } from '../common/returning';

/** A started sign-in, kept until the provider sends the person back. */
export interface SignInRequest {
  state: string;
  nonce: string;
  codeVerifier: string;
  returnTo: string;
}

/** How long a started sign-in may take at the provider (a person typing a password, a second factor). */
export const SIGN_IN_REQUEST_MINUTES = 10;

/** The SQL of sign-in requests and sessions. */
@Injectable()
export class SessionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Keeps a started sign-in, unless `cap` sign-ins are under way already (anyone may start one:
   * the table stays bounded however often `/auth/login` is called).
   * @returns false when the cap was reached
   */
  async saveSignInRequest(request: SignInRequest, cap: number): Promise<boolean> {
    const inserted: Array<{ state: string }> = await this.db.query(
      `INSERT INTO sign_in_requests (state, nonce, code_verifier, return_to)
       SELECT $1, $2, $3, $4
        WHERE (SELECT count(*) FROM sign_in_requests WHERE created_at > now() - make_interval(mins => $5)) < $6
       RETURNING state`,
      [request.state, request.nonce, request.codeVerifier, request.returnTo, SIGN_IN_REQUEST_MINUTES, cap],
    );
    return inserted.length > 0;
  }

  /**
   * Takes (deletes and returns) the sign-in started with `state`, if it is recent: a callback can
   * use it once, so a replayed callback finds nothing.
   */
  async takeSignInRequest(state: string): Promise<SignInRequest | null> {
    const rows = await returningRows<SignInRequest & { fresh: boolean }>(
      this.db,
      `DELETE FROM sign_in_requests WHERE state = $1
       RETURNING state, nonce, code_verifier AS "codeVerifier", return_to AS "returnTo",
                 created_at > now() - make_interval(mins => $2) AS fresh`,
      [state, SIGN_IN_REQUEST_MINUTES],
    );
    const row = rows[0];
    if (!row?.fresh) return null;
    return { state: row.state, nonce: row.nonce, codeVerifier: row.codeVerifier, returnTo: row.returnTo };
  }

  async createSession(
    idHash: string,
    userId: string,
    csrfToken: string,
    hours: number,
    idToken: string | null,
  ): Promise<Date> {
    const rows: Array<{ expiresAt: Date }> = await this.db.query(
      `INSERT INTO sessions (id_hash, user_id, csrf_token, expires_at, id_token)
       VALUES ($1, $2, $3, now() + make_interval(hours => $4), $5)
       RETURNING expires_at AS "expiresAt"`,
      [idHash, userId, csrfToken, hours, idToken],
    );
    return (rows[0] as { expiresAt: Date }).expiresAt;
  }

  /**
   * The session of a hashed id (by the database's clock), or null when unknown or expired;
   * `recheck` when it is older than `recheckMinutes` (its groups must be read again).
   */
  async liveSession(
    idHash: string,
    recheckMinutes: number,
  ): Promise<{ userId: string; csrfToken: string; recheck: boolean } | null> {
    const rows: Array<{ userId: string; csrfToken: string; recheck: boolean }> = await this.db.query(
      `SELECT user_id AS "userId", csrf_token AS "csrfToken", created_at <= now() - make_interval(mins => $2) AS recheck
         FROM sessions WHERE id_hash = $1 AND expires_at > now()`,
      [idHash, recheckMinutes],
    );
    return rows[0] ?? null;
  }

  /** Which of some hashed ids are live sessions now, and not older than `recheckMinutes`. */
  async liveOf(idHashes: string[], recheckMinutes: number): Promise<string[]> {
    const rows: Array<{ idHash: string }> = await this.db.query(
      `SELECT id_hash AS "idHash" FROM sessions
        WHERE id_hash = ANY($1::text[]) AND expires_at > now() AND created_at > now() - make_interval(mins => $2)`,
      [idHashes, recheckMinutes],
    );
    return rows.map((row) => row.idHash);
  }

  /** Deletes a session. @returns its ID token (for the provider's sign-out), null when none or no session */
  async deleteSession(idHash: string): Promise<{ idToken: string | null } | null> {
    const rows = await returningRows<{ idToken: string | null }>(
      this.db,
      'DELETE FROM sessions WHERE id_hash = $1 RETURNING id_token AS "idToken"',
      [idHash],
    );
    return rows[0] ?? null;
  }

  /** Deletes expired sessions and abandoned sign-ins. @returns how many rows went */
  async prune(): Promise<number> {
    const sessions: [unknown[], number] = await this.db.query(`DELETE FROM sessions WHERE expires_at <= now()`);
    const requests: [unknown[], number] = await this.db.query(
      `DELETE FROM sign_in_requests WHERE created_at <= now() - make_interval(mins => $1)`,
      [SIGN_IN_REQUEST_MINUTES],
    );
    return sessions[1] + requests[1];
  }
}
