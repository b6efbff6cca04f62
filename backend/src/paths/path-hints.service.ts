import { Injectable } from '@nestjs/common';
import { matchTemplate, type PathHintCreatedResponse, type PathHintResponse } from '@spectator/shared';
import type { Principal } from '../auth/tokens.service';
import { DomainError, ErrorCode } from '../common/errors';
import { EventsService } from '../events/events.service';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import { type HintRow, PathsRepository } from './paths.repository';
import { canonicalTemplate, RegroupService } from './regroup.service';

/** Hints kept per project at most (each is sent to every agent of the project). */
export const MAX_PATH_HINTS = 1_000;

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
    private readonly paths: PathsRepository,
    private readonly regroup: RegroupService,
    private readonly events: EventsService,
    private readonly versions: VersionStore,
  ) {}

  /** A project's hints, oldest first. */
  async list(project: ProjectEntity): Promise<PathHintResponse[]> {
    return (await this.paths.hints(project.id)).map(toResponse);
  }

  /** The hinted templates of a project (for agents, after the documented ones). */
  templates(projectId: string): Promise<string[]> {
    return this.paths.hintTemplates(projectId);
  }

  /**
   * Keeps a hint (idempotent) and regroups the project's stored rows into it.
   * @throws DomainError BadInput for a malformed template or too many hints, Conflict when a
   * documented template already covers every path of it.
   */
  async add(project: ProjectEntity, principal: Principal, template: string): Promise<PathHintCreatedResponse> {
    const canonical = canonicalTemplate(template);
    const documented = await this.versions.documentedPaths(project.id);
    const winner = documented.find((path) => matchTemplate(path, canonical));
    if (winner !== undefined)
      throw new DomainError(
        ErrorCode.Conflict,
        `template ${canonical} is covered by the documented ${winner}, which wins over a hint`,
      );
    const row = await this.paths.addHint(project.id, canonical, principal.name, MAX_PATH_HINTS);
    if (!row)
      throw new DomainError(ErrorCode.BadInput, `project ${project.slug} already has ${MAX_PATH_HINTS} path hints`);
    const regrouped = await this.regroup.regroup(project.id, canonical);
    await this.events.publish(project.id, { type: 'paths.hinted', template: canonical, regrouped });
    return { ...toResponse(row), regrouped };
  }

  /** Forgets a hint (rows merged into it stay merged). @throws DomainError PathHintNotFound */
  async remove(project: ProjectEntity, template: string): Promise<void> {
    const canonical = canonicalTemplate(template);
    if (!(await this.paths.removeHint(project.id, canonical)))
      throw new DomainError(ErrorCode.PathHintNotFound, `project ${project.slug} has no path hint ${canonical}`);
  }
}
