import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { AuditAction } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import type { Queryable } from '../common/queryable';

/** A row of `audit_events` as written. */
export interface AuditEntry {
  projectId: string;
  action: AuditAction;
  actorKind: 'person' | 'token' | 'system';
  actorId: string | null;
  actorName: string | null;
  actorEmail: string | null;
  actorSubject: string | null;
  target: string | null;
  details: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  id: string;
  at: Date;
}

/** The SQL of the audit log. */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Appends an entry, in `manager`'s transaction when given (so it commits or rolls back with what it records). */
  async insert(entry: AuditEntry, manager?: EntityManager): Promise<void> {
    await (manager ?? this.db.manager).query(
      `INSERT INTO audit_events (project_id, action, actor_kind, actor_id, actor_name, actor_email, actor_subject, target, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        entry.projectId,
        entry.action,
        entry.actorKind,
        entry.actorId,
        entry.actorName,
        entry.actorEmail,
        entry.actorSubject,
        entry.target,
        JSON.stringify(entry.details),
      ],
    );
  }

  /** A project's entries, newest first, older than `before`, of one action and one actor when given. */
  async page(
    projectId: string,
    filter: { limit: number; before?: string; action?: AuditAction; actor?: string },
  ): Promise<AuditRow[]> {
    return this.db.query(
      `SELECT id::text, at, action, actor_kind AS "actorKind", actor_id AS "actorId", actor_name AS "actorName",
              actor_email AS "actorEmail", actor_subject AS "actorSubject", target, details, project_id AS "projectId"
         FROM audit_events
        WHERE project_id = $1
          AND ($2::bigint IS NULL OR id < $2::bigint)
          AND ($3::text IS NULL OR action = $3)
          AND ($4::text IS NULL OR actor_id::text = $4 OR lower(actor_email) = lower($4) OR actor_subject = $4)
        ORDER BY id DESC
        LIMIT $5`,
      [projectId, filter.before ?? null, filter.action ?? null, filter.actor ?? null, filter.limit],
    );
  }

  /**
   * Renames `literals` to `template` in the endpoints (`METHOD path`) that the `details.endpoints`
   * of a project's entries of `action` about `targets` name, each endpoint once, in first-named
   * order (regrouping: no name stays stored).
   */
  async renamePaths(
    projectId: string,
    action: AuditAction,
    targets: readonly string[],
    literals: readonly string[],
    template: string,
    manager: Queryable,
  ): Promise<void> {
    await manager.query(
      `UPDATE audit_events a
          SET details = jsonb_set(a.details, '{endpoints}', (
                SELECT coalesce(jsonb_agg(r.e ORDER BY r.i), '[]'::jsonb)
                  FROM (SELECT CASE WHEN split_part(x.v, ' ', 2) = ANY($4::text[]) THEN split_part(x.v, ' ', 1) || ' ' || $5 ELSE x.v END AS e,
                               min(x.i) AS i
                          FROM jsonb_array_elements_text(a.details->'endpoints') WITH ORDINALITY AS x(v, i)
                         GROUP BY 1) r))
        WHERE a.project_id = $1 AND a.action = $2 AND a.target = ANY($3::text[])
          AND jsonb_typeof(a.details->'endpoints') = 'array'`,
      [projectId, action, targets, literals, template],
    );
  }
}
