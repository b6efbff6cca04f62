import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { RuntimeResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { RuntimeQuery } from './dto/runtime.dto';
import { RuntimeService } from './runtime.service';

@ApiTags('runtime')
@ApiBearerAuth()
@Controller('projects/:p')
export class RuntimeController {
  constructor(private readonly runtime: RuntimeService) {}

  @Get('endpoints/:id/runtime')
  @RequireScope('read')
  series(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: RuntimeQuery,
  ): Promise<RuntimeResponse> {
    return this.runtime.series(project, id, query);
  }
}
