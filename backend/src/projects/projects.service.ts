import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ProjectResponse } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { actorOf, type Principal } from '../common/principal';
import { DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { isUniqueViolation } from '../common/pg-errors';
import type { Queryable } from '../common/queryable';
import type { ProjectEntity } from './project.entity';
import { projectsRepository } from './projects.repository';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export function toProjectResponse(entity: ProjectEntity): ProjectResponse {
  return {
    id: entity.id,
    slug: entity.slug,
    name: entity.name,
    createdAt: entity.createdAt.toISOString(),
    fourEyes: entity.fourEyes,
  };
}

/**
 * The answer for a slug a caller may not see: the same for a project that does not exist and for
 * another project's, so slugs cannot be listed by trying them (issue 15).
 */
export function projectNotFound(slug: string): DomainError {
  return new DomainError(ErrorCode.ProjectNotFound, `project ${slug} does not exist`);
}

/**
 * Whether a project requires four eyes, read now from the database (not from a replica's cache of
 * the project), in the caller's transaction. The row is share-locked until that transaction ends,
 * so a change of the setting waits for approvals under way and every later one sees it.
 */
export function fourEyesNow(manager: Queryable, projectId: string): Promise<boolean> {
  return projectsRepository.fourEyesNow(manager, projectId);
}

@Injectable()
export class ProjectsService {
  /**
   * Projects by slug for a few seconds: every request resolves its project, and a project's id,
   * slug and name do not change (there is no rename), so a short cache only saves round trips.
   */
  private readonly bySlugCache = new LruCache<string, { project: ProjectEntity; at: number }>(1_000);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditService,
  ) {}

  /** Creates a project; only the bootstrap admin token (not bound to a project) may. */
  async create(principal: Principal, input: { slug: string; name: string }): Promise<ProjectResponse> {
    if (principal.projectId !== null)
      throw new DomainError(ErrorCode.Forbidden, 'creating a project needs the bootstrap admin token');
    try {
      const saved = await projectsRepository.insert(this.db, input.slug, input.name);
      await this.audit.record({
        projectId: saved.id,
        actor: actorOf(principal),
        action: 'project.created',
        details: { slug: input.slug, name: input.name },
      });
      return toProjectResponse(saved);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new DomainError(ErrorCode.ProjectExists, `slug ${input.slug} is already taken`);
      throw error;
    }
  }

  /** Projects by id (`null`: all of them). */
  async list(ids: string[] | null): Promise<ProjectResponse[]> {
    if (ids !== null && ids.length === 0) return [];
    return (await projectsRepository.list(this.db, ids)).map(toProjectResponse);
  }

  /** @throws DomainError BadInput for a malformed slug, ProjectNotFound for an unknown one. */
  async bySlug(slug: string): Promise<ProjectEntity> {
    if (!SLUG_PATTERN.test(slug))
      throw new DomainError(
        ErrorCode.BadInput,
        'project slug must be 1-63 characters of a-z, 0-9 and -, starting with a letter or digit',
      );
    const cached = this.bySlugCache.get(slug);
    if (cached && Date.now() - cached.at < 10_000) return cached.project;
    const project = await projectsRepository.bySlug(this.db, slug);
    if (!project) throw projectNotFound(slug);
    this.bySlugCache.set(slug, { project, at: Date.now() });
    return project;
  }

  /**
   * Changes a project's settings. This replica forgets its cached copy at once; others show the
   * change within the 10 s of their cache, but enforce it at once (`fourEyesNow`).
   */
  async update(project: ProjectEntity, by: Principal, input: { fourEyes?: boolean }): Promise<ProjectResponse> {
    if (input.fourEyes !== undefined && input.fourEyes !== project.fourEyes) {
      await projectsRepository.setFourEyes(this.db, project.id, input.fourEyes);
      await this.audit.record({
        projectId: project.id,
        actor: actorOf(by),
        action: 'project.updated',
        details: { fourEyes: input.fourEyes },
      });
    }
    this.bySlugCache.delete(project.slug);
    return toProjectResponse(await this.byId(project.id));
  }

  /** @throws DomainError ProjectNotFound. */
  async byId(id: string): Promise<ProjectEntity> {
    const project = await projectsRepository.byId(this.db, id);
    if (!project) throw new DomainError(ErrorCode.ProjectNotFound, `project ${id} does not exist`);
    return project;
  }
}
