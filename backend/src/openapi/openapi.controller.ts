import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import type { ProjectEntity } from '../projects/project.entity';
import { OpenApiQuery } from './dto/openapi.dto';
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
}
