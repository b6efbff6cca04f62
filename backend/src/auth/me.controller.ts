import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { WhoAmIResponse } from '@spectator/shared';
import { ProjectsService } from '../projects/projects.service';
import { CurrentPrincipal, RequireScope } from './auth.guard';
import type { Principal } from './tokens.service';

@ApiTags('projects')
@ApiBearerAuth()
@Controller('me')
export class MeController {
  constructor(private readonly projects: ProjectsService) {}

  /** The calling token: its name, scope and project, so the dashboard shows only what it may do. */
  @Get()
  @RequireScope('read')
  async me(@CurrentPrincipal() principal: Principal): Promise<WhoAmIResponse> {
    return {
      name: principal.name,
      scope: principal.scope,
      project: principal.projectId === null ? null : (await this.projects.byId(principal.projectId)).slug,
      environments: principal.environments,
    };
  }
}
