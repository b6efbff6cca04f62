import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { ProjectResponse, TokenResponse } from '@spectator/shared';
import { AuthGuard, CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import { type Principal, TokensService } from '../auth/tokens.service';
import { CreateProjectDto, CreateTokenDto, UpdateProjectDto } from './dto/project.dto';
import type { ProjectEntity } from './project.entity';
import { ProjectsService, toProjectResponse } from './projects.service';
import { uuidPipe } from '../common/validation';

@ApiTags('projects')
@ApiBearerAuth()
@Controller('projects')
export class ProjectsController {
  constructor(
    private readonly projects: ProjectsService,
    private readonly tokens: TokensService,
    private readonly guard: AuthGuard,
  ) {}

  @Post()
  @RequireScope('admin')
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateProjectDto): Promise<ProjectResponse> {
    return this.projects.create(principal, body);
  }

  @Get()
  @RequireScope('read')
  async list(@CurrentPrincipal() principal: Principal): Promise<ProjectResponse[]> {
    return this.projects.list(await this.guard.visibleProjectIds(principal));
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

  @Post(':p/tokens')
  @RequireScope('admin')
  createToken(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateTokenDto,
  ): Promise<TokenResponse> {
    return this.tokens.create(project.id, body, principal);
  }

  @Get(':p/tokens')
  @RequireScope('admin')
  listTokens(@CurrentProject() project: ProjectEntity): Promise<TokenResponse[]> {
    return this.tokens.list(project.id);
  }

  @Delete(':p/tokens/:tokenId')
  @HttpCode(204)
  @RequireScope('admin')
  revokeToken(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Param('tokenId', uuidPipe('tokenId')) tokenId: string,
  ): Promise<void> {
    return this.tokens.revoke(project.id, tokenId, principal);
  }
}
