import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { WhoAmIResponse } from '@spectator/shared';
import type { ProjectEntity } from '../projects/project.entity';
import { ProjectsService } from '../projects/projects.service';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../common/access';
import type { Principal } from '../common/principal';
import { toPersonResponse } from '../users/users.service';

@ApiTags('projects')
@ApiBearerAuth()
@Controller()
export class MeController {
  constructor(private readonly projects: ProjectsService) {}

  /**
   * The caller: a token (name, scope, project) or a signed-in person (with the CSRF token their
   * changes must carry), so the dashboard shows only what it may do.
   */
  @Get('me')
  @RequireScope('read')
  async me(@CurrentPrincipal() principal: Principal): Promise<WhoAmIResponse> {
    if (principal.kind === 'person')
      return {
        kind: 'person',
        name: principal.name,
        scope: principal.person.instanceAdmin ? 'admin' : 'read',
        project: null,
        environments: null,
        person: toPersonResponse(principal.person),
        csrfToken: principal.csrfToken,
      };
    return {
      kind: 'token',
      name: principal.name,
      scope: principal.scope,
      project: principal.projectId === null ? null : (await this.projects.byId(principal.projectId)).slug,
      environments: principal.environments,
    };
  }

  /** The caller in one project: for a person, their role there (and the scope it is worth). */
  @Get('projects/:p/me')
  @RequireScope('read')
  async inProject(
    @CurrentPrincipal() principal: Principal,
    @CurrentProject() project: ProjectEntity,
  ): Promise<WhoAmIResponse> {
    const who = await this.me(principal);
    return principal.kind === 'person'
      ? { ...who, project: project.slug, scope: principal.scope, ...(principal.role ? { role: principal.role } : {}) }
      : who;
  }
}
