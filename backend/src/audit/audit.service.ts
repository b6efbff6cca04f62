import { Injectable } from '@nestjs/common';
import type { AuditAction, AuditEventResponse, AuditPageResponse } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import type { Actor } from '../common/principal';
import type { Queryable } from '../common/queryable';
import { AuditRepository, type AuditRow } from './audit.repository';

export function toAuditEventResponse(row: AuditRow): AuditEventResponse {
  return {
    id: row.id,
    at: row.at.toISOString(),
    action: row.action,
    actor: {
      kind: row.actorKind,
      id: row.actorId,
      name: row.actorName,
      email: row.actorEmail,
      subject: row.actorSubject,
    },
    target: row.target,
    details: row.details,
  };
}

/** What happened, for the audit log. */
export interface AuditRecord {
  projectId: string;
  /** `null`: the service itself (a step moved by evidence). */
  actor: Actor | null;
  action: AuditAction;
  target?: string | null;
  details?: Record<string, unknown>;
}

/**
 * The audit log: who (a person with name, email and provider subject, or a token) did what in a
 * project, and when. Writers record inside their own transaction when they have one.
 */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  async record(record: AuditRecord, manager?: EntityManager): Promise<void> {
    const { actor } = record;
    await this.audit.insert(
      {
        projectId: record.projectId,
        action: record.action,
        actorKind: actor?.kind ?? 'system',
        actorId: actor?.id ?? null,
        actorName: actor?.name ?? null,
        actorEmail: actor?.email ?? null,
        actorSubject: actor?.subject ?? null,
        target: record.target ?? null,
        details: record.details ?? {},
      },
      manager,
    );
  }

  /**
   * Regrouping, in its transaction: the endpoints (`METHOD path`) named in the `details.endpoints`
   * of a project's entries of `action` about `targets` name `template` instead of `literals`.
   */
  renamePaths(
    manager: Queryable,
    projectId: string,
    action: AuditAction,
    targets: readonly string[],
    literals: readonly string[],
    template: string,
  ): Promise<void> {
    return this.audit.renamePaths(projectId, action, targets, literals, template, manager);
  }

  /** A page of a project's log, newest first. */
  async page(
    projectId: string,
    filter: { limit: number; before?: string; action?: AuditAction; actor?: string },
  ): Promise<AuditPageResponse> {
    const rows = await this.audit.page(projectId, filter);
    return {
      events: rows.map(toAuditEventResponse),
      next: rows.length === filter.limit ? (rows[rows.length - 1]?.id ?? null) : null,
    };
  }
}
