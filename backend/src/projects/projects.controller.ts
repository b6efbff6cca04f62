import { Body, Controller, Get, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { ProjectResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../common/access';
import type { Principal } from '../common/principal';
import { UsersService } from '../users/users.service';
import { CreateProjectDto, UpdateProjectDto } from './dto/project.dto';
import type { ProjectEntity } from './project.entity';
import { ProjectsService, toProjectResponse } from './projects.service';

@ApiTags('projects')
@ApiBearerAuth()
@Controller('projects')
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly users: UsersService,
  ) {}

  @Post()
  @RequireScope('admin')
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateProjectDto): Promise<ProjectResponse> {
    return this.projects.create(principal, body);
  }

  @Get()
  @RequireScope('read')
  async list(@CurrentPrincipal() principal: Principal): Promise<ProjectResponse[]> {
    return this.projects.list(await this.users.visibleProjectIds(principal));
  }

  @Get(':p')
  @RequireScope('read')
  get(@CurrentProject() project: ProjectEntity): ProjectResponse {
    return toProjectResponse(project);
  }

  /** Project settings: `fourEyes`. */
  @Patch(':p')
  @RequireScope('admin')
  update(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: UpdateProjectDto,
  ): Promise<ProjectResponse> {
    return this.projects.update(project, principal, body);
  }
}
