import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { matchTemplate, type PathHintCreatedResponse, type PathHintResponse } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import type { Principal } from '../auth/tokens.service';
import { DomainError, ErrorCode } from '../common/errors';
import { EventsService } from '../events/events.service';
import type { ProjectEntity } from '../projects/project.entity';
import { canonicalTemplate, RegroupService } from './regroup.service';

/** Hints kept per project at most (each is sent to every agent of the project). */
export const MAX_PATH_HINTS = 1_000;

interface HintRow {
  template: string;
  createdBy: string | null;
  createdAt: Date;
}

const toResponse = (row: HintRow): PathHintResponse => ({
  template: row.template,
  createdBy: row.createdBy,
  createdAt: row.createdAt.toISOString(),
});

/**
 * Templates users state in the dashboard ("this segment is a parameter" on an undocumented
 * endpoint, or literal siblings merged into one template). A hint regroups what is stored under
 * its literal paths at once (RegroupService, across the project) and is sent to agents after the
 * documented templates, so later traffic arrives under it. Documented and imported templates
 * always win: a hint that would take paths of a documented template is refused.
 */
@Injectable()
export class PathHintsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly regroup: RegroupService,
    private readonly events: EventsService,
  ) {}

  /** A project's hints, oldest first. */
  async list(project: ProjectEntity): Promise<PathHintResponse[]> {
    const rows: HintRow[] = await this.db.query(
      'SELECT template, created_by AS "createdBy", created_at AS "createdAt" FROM path_hints WHERE project_id = $1 ORDER BY created_at, template',
      [project.id],
    );
    return rows.map(toResponse);
  }

  /** The hinted templates of a project (for agents, after the documented ones). */
  async templates(projectId: string): Promise<string[]> {
    const rows: Array<{ template: string }> = await this.db.query(
      'SELECT template FROM path_hints WHERE project_id = $1 ORDER BY template',
      [projectId],
    );
    return rows.map((row) => row.template);
  }

  /**
   * Keeps a hint (idempotent) and regroups the project's stored rows into it.
   * @throws DomainError BadInput for a malformed template or too many hints, Conflict when a
   * documented template already covers every path of it.
   */
  async add(project: ProjectEntity, principal: Principal, template: string): Promise<PathHintCreatedResponse> {
    const canonical = canonicalTemplate(template);
    const documented: Array<{ path: string }> = await this.db.query(
      'SELECT DISTINCT path FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL',
      [project.id],
    );
    const winner = documented.find((row) => matchTemplate(row.path, canonical));
    if (winner !== undefined)
      throw new DomainError(
        ErrorCode.Conflict,
        `template ${canonical} is covered by the documented ${winner.path}, which wins over a hint`,
      );
    const [row] = (await this.db.query(
      `WITH counted AS (SELECT count(*) AS hints FROM path_hints WHERE project_id = $1)
       INSERT INTO path_hints (project_id, template, created_by)
       SELECT $1, $2, $3 FROM counted WHERE counted.hints < $4
       ON CONFLICT (project_id, template) DO UPDATE SET template = EXCLUDED.template
       RETURNING template, created_by AS "createdBy", created_at AS "createdAt"`,
      [project.id, canonical, principal.name, MAX_PATH_HINTS],
    )) as HintRow[];
    if (!row)
      throw new DomainError(ErrorCode.BadInput, `project ${project.slug} already has ${MAX_PATH_HINTS} path hints`);
    const regrouped = await this.regroup.regroup(project.id, canonical);
    await this.events.publish(project.id, { type: 'paths.hinted', template: canonical, regrouped });
    return { ...toResponse(row), regrouped };
  }

  /** Forgets a hint (rows merged into it stay merged). @throws DomainError PathHintNotFound */
  async remove(project: ProjectEntity, template: string): Promise<void> {
    const canonical = canonicalTemplate(template);
    const [deleted] = (await this.db.query(
      'WITH gone AS (DELETE FROM path_hints WHERE project_id = $1 AND template = $2 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [project.id, canonical],
    )) as Array<{ n: number }>;
    if (!deleted?.n)
      throw new DomainError(ErrorCode.PathHintNotFound, `project ${project.slug} has no path hint ${canonical}`);
  }
}
