import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { ProjectResponse, TokenResponse } from '@spectator/shared';
import { AuthGuard, CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import { type Principal, TokensService } from '../auth/tokens.service';
import { CreateProjectDto, CreateTokenDto } from './dto/project.dto';
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
  list(@CurrentPrincipal() principal: Principal): Promise<ProjectResponse[]> {
    return this.projects.list(this.guard.visibleProjectIds(principal));
  }

  @Get(':p')
  @RequireScope('read')
  get(@CurrentProject() project: ProjectEntity): ProjectResponse {
    return toProjectResponse(project);
  }

  @Post(':p/tokens')
  @RequireScope('admin')
  createToken(@CurrentProject() project: ProjectEntity, @Body() body: CreateTokenDto): Promise<TokenResponse> {
    return this.tokens.create(project.id, body);
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
    @Param('tokenId', uuidPipe('tokenId')) tokenId: string,
  ): Promise<void> {
    return this.tokens.revoke(project.id, tokenId);
  }
}
