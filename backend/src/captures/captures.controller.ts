import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { CaptureResponse, DiffResponse, ObservedEndpointResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { CapturesService } from './captures.service';
import { ListCapturesQuery, ObservedQuery } from './dto/captures.dto';

@ApiTags('captures')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p/captures')
export class CapturesController {
  constructor(private readonly captures: CapturesService) {}

  @Get()
  list(@CurrentProject() project: ProjectEntity, @Query() query: ListCapturesQuery): Promise<CaptureResponse[]> {
    return this.captures.list(project, query.limit ?? 20, query.before === undefined ? undefined : new Date(query.before));
  }

  @Get(':id')
  async get(@CurrentProject() project: ProjectEntity, @Param('id', uuidPipe('id')) id: string): Promise<CaptureResponse> {
    return this.captures.summary(project, await this.captures.byId(project, id));
  }

  @Get(':id/undocumented')
  undocumented(@CurrentProject() project: ProjectEntity, @Param('id', uuidPipe('id')) id: string): Promise<UndocumentedEndpointResponse[]> {
    return this.captures.undocumented(project, id);
  }

  @Get(':id/diffs')
  diffs(@CurrentProject() project: ProjectEntity, @Param('id', uuidPipe('id')) id: string): Promise<DiffResponse[]> {
    return this.captures.diffs(project, id);
  }

  @Get(':id/observed')
  observed(@CurrentProject() project: ProjectEntity, @Param('id', uuidPipe('id')) id: string, @Query() query: ObservedQuery): Promise<ObservedEndpointResponse> {
    return this.captures.observed(project, id, query.method, query.path);
  }
}
