import { Body, Controller, Delete, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { DeprecationResponse, OrphansResponse, SafeToRemoveResponse, UsageResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import { afterKey } from '../captures/dto/captures.dto';
import { badInput } from '../common/errors';
import type { ProjectEntity } from '../projects/project.entity';
import { DeprecationDto, OrphansQuery, UsageQuery, WindowQuery } from './dto/usage.dto';
import { UsageService } from './usage.service';

function checked(body: DeprecationDto): DeprecationDto {
  if (body.location !== 'endpoint' && body.name === undefined)
    throw badInput(`name is required for a ${body.location} (the parameter, header or field to mark)`);
  return body;
}

@ApiTags('usage')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p')
export class UsageController {
  constructor(private readonly usages: UsageService) {}

  @Get('usage')
  usage(@CurrentProject() project: ProjectEntity, @Query() query: UsageQuery): Promise<UsageResponse> {
    const after = afterKey(query);
    return this.usages.usage(project, query.environment, {
      ...(after === undefined ? {} : { after }),
      ...(query.limit === undefined ? {} : { limit: query.limit }),
      ...(query.build === undefined ? {} : { build: query.build }),
    });
  }

  @Get('usage/orphans')
  orphans(@CurrentProject() project: ProjectEntity, @Query() query: OrphansQuery): Promise<OrphansResponse> {
    const where = {
      kind: query.environment ?? 'production',
      ...(query.build === undefined ? {} : { build: query.build }),
    };
    return this.usages.orphans(project, where, query.days ?? 30);
  }

  @Get('usage/safe-to-remove')
  safeToRemove(@CurrentProject() project: ProjectEntity, @Query() query: WindowQuery): Promise<SafeToRemoveResponse> {
    return this.usages.safeToRemove(project, query.days ?? 30);
  }

  @Get('deprecations')
  deprecations(@CurrentProject() project: ProjectEntity): Promise<DeprecationResponse[]> {
    return this.usages.deprecations(project);
  }

  @Post('deprecations')
  @HttpCode(204)
  @RequireScope('write')
  mark(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: DeprecationDto,
  ): Promise<void> {
    return this.usages.mark(project, principal, checked(body));
  }

  @Delete('deprecations')
  @HttpCode(204)
  @RequireScope('write')
  unmark(@CurrentProject() project: ProjectEntity, @Body() body: DeprecationDto): Promise<void> {
    return this.usages.unmark(project, checked(body));
  }
}
