import { Controller, Get, Header, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import { MatrixQuery } from '../evidence/dto/evidence.dto';
import type { ProjectEntity } from '../projects/project.entity';
import { MatrixPageService } from './matrix-page.service';

@ApiTags('evidence')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p')
export class MatrixController {
  constructor(private readonly matrix: MatrixPageService) {}

  /**
   * The version matrix (`VersionMatrixResponse`), sent as the JSON text the service assembles from
   * stored row texts: a string body is sent as it is, under the JSON content type set here before
   * the handler runs (an error body is JSON too).
   */
  @Get('versions')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({ description: 'VersionMatrixResponse: {endpoints, rows, runtime, cells[row][endpoint], nextCursor}' })
  versions(@CurrentProject() project: ProjectEntity, @Query() query: MatrixQuery): Promise<string> {
    return this.matrix.json(project, { kind: query.kind, limit: query.limit ?? 20, cursor: query.cursor });
  }
}
