import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';

/** A path hint as the API lists it. */
export interface HintRow {
  template: string;
  createdBy: string | null;
  createdAt: Date;
}

/**
 * The SQL of path hints (`path_hints`), raw SQL in one style. Regrouping's rewrites are the
 * owners' (captures, evidence, runtime, proposals, audit: see RegroupService); this repository
 * only opens its transaction.
 */
@Injectable()
export class PathsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Runs `work` in one transaction, committed when it resolves. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** A project's hints, oldest first. */
  hints(projectId: string): Promise<HintRow[]> {
    return this.db.query(
      'SELECT template, created_by AS "createdBy", created_at AS "createdAt" FROM path_hints WHERE project_id = $1 ORDER BY created_at, template',
      [projectId],
    );
  }

  /** A project's hinted templates, sorted. */
  async hintTemplates(projectId: string): Promise<string[]> {
    const rows = (await this.db.query('SELECT template FROM path_hints WHERE project_id = $1 ORDER BY template', [
      projectId,
    ])) as Array<{ template: string }>;
    return rows.map((row) => row.template);
  }

  /**
   * Keeps a hint (an existing one is returned as it is) while the project has fewer than `max`.
   * @returns the hint, or null when the project already has `max` hints.
   */
  async addHint(projectId: string, template: string, createdBy: string, max: number): Promise<HintRow | null> {
    const [row] = (await this.db.query(
      `WITH counted AS (SELECT count(*) AS hints FROM path_hints WHERE project_id = $1)
       INSERT INTO path_hints (project_id, template, created_by)
       SELECT $1, $2, $3 FROM counted WHERE counted.hints < $4
       ON CONFLICT (project_id, template) DO UPDATE SET template = EXCLUDED.template
       RETURNING template, created_by AS "createdBy", created_at AS "createdAt"`,
      [projectId, template, createdBy, max],
    )) as HintRow[];
    return row ?? null;
  }

  /** Forgets a hint. @returns whether the project had it. */
  async removeHint(projectId: string, template: string): Promise<boolean> {
    const [deleted] = (await this.db.query(
      'WITH gone AS (DELETE FROM path_hints WHERE project_id = $1 AND template = $2 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [projectId, template],
    )) as Array<{ n: number }>;
    return (deleted?.n ?? 0) > 0;
  }
}
