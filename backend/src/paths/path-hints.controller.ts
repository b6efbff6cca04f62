import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { PathHintCreatedResponse, PathHintResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import type { ProjectEntity } from '../projects/project.entity';
import { PathHintDto } from './dto/path-hints.dto';
import { PathHintsService } from './path-hints.service';

/** Templates users state: "this segment is a parameter" (docs/paths.md, Hints). */
@ApiTags('path hints')
@ApiBearerAuth()
@Controller('projects/:p/path-hints')
export class PathHintsController {
  constructor(private readonly hints: PathHintsService) {}

  @Get()
  @RequireScope('read')
  list(@CurrentProject() project: ProjectEntity): Promise<PathHintResponse[]> {
    return this.hints.list(project);
  }

  @Post()
  @RequireScope('write')
  add(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: PathHintDto,
  ): Promise<PathHintCreatedResponse> {
    return this.hints.add(project, principal, body.template);
  }

  @Delete()
  @RequireScope('write')
  @HttpCode(204)
  async remove(@CurrentProject() project: ProjectEntity, @Query() query: PathHintDto): Promise<void> {
    await this.hints.remove(project, query.template);
  }
}
