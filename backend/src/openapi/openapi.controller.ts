import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { OpenApiImportResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import type { ProjectEntity } from '../projects/project.entity';
import { OpenApiImportQuery, OpenApiQuery } from './dto/openapi.dto';
import { OpenApiService } from './openapi.service';

@ApiTags('openapi')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p')
export class OpenApiController {
  constructor(private readonly openapi: OpenApiService) {}

  @Get('openapi.json')
  document(@CurrentProject() project: ProjectEntity, @Query() query: OpenApiQuery): Promise<Record<string, unknown>> {
    return this.openapi.document(project, query);
  }

  /**
   * Imports an OpenAPI 3.0/3.1 document (JSON, or YAML as `application/yaml`) as a proposal of planned shapes: every operation
   * with its description, request body and responses per status code. With `?approve=true` the
   * proposal is approved at once (by an approver; refused under four eyes): new endpoints become
   * 1.0, documented ones their next version.
   */
  @Post('openapi/import')
  @HttpCode(201)
  @RequireScope('write')
  import(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: unknown,
    @Query() query: OpenApiImportQuery,
  ): Promise<OpenApiImportResponse> {
    return this.openapi.import(project, principal, body, query.approve === 'true');
  }
}
