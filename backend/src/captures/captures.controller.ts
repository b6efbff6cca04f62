import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { CaptureResponse, ObservedEndpointResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { CapturesService } from './captures.service';
import { afterKey, ListCapturesQuery, ObservedQuery, ViewPageQuery } from './dto/captures.dto';

@ApiTags('captures')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p/captures')
export class CapturesController {
  constructor(private readonly captures: CapturesService) {}

  @Get()
  list(@CurrentProject() project: ProjectEntity, @Query() query: ListCapturesQuery): Promise<CaptureResponse[]> {
    return this.captures.list(
      project,
      query.limit ?? 20,
      query.before === undefined ? undefined : new Date(query.before),
    );
  }

  @Get(':id')
  async get(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
  ): Promise<CaptureResponse> {
    return this.captures.summary(project, await this.captures.byId(project, id));
  }

  // The two views are sent as the JSON text the service keeps with each computed view: a string
  // body is sent as it is, under the JSON content type set before the handler runs (an error body
  // is JSON too).
  @Get(':id/undocumented')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({ description: 'UndocumentedEndpointResponse[]: [{method, path, interactions, count}]' })
  undocumented(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() page: ViewPageQuery,
  ): Promise<string> {
    return this.captures.undocumentedJson(project, id, afterKey(page), page.limit);
  }

  @Get(':id/diffs')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({
    description: 'DiffResponse[]: [{endpointId, method, path, version, interactions, breaking, changes}]',
  })
  diffs(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() page: ViewPageQuery,
  ): Promise<string> {
    return this.captures.diffsJson(project, id, afterKey(page), page.limit);
  }

  @Get(':id/observed')
  observed(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: ObservedQuery,
  ): Promise<ObservedEndpointResponse> {
    return this.captures.observed(project, id, query.method, query.path);
  }
}
