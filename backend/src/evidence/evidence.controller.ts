import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { CiSummaryResponse, EvidenceResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import type { ProjectEntity } from '../projects/project.entity';
import { CiGateService } from './ci-gate.service';
import { EnvironmentQuery, MatrixQuery } from './dto/evidence.dto';
import { MatrixService } from './matrix.service';

@ApiTags('evidence')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p')
export class EvidenceController {
  constructor(
    private readonly matrix: MatrixService,
    private readonly ciGate: CiGateService,
  ) {}

  /**
   * The version matrix (`VersionMatrixResponse`), sent as the JSON text the service assembles from
   * stored row texts: a string body is sent as it is, under the JSON content type set here before
   * the handler runs (an error body is JSON too).
   */
  @Get('versions')
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOkResponse({ description: 'VersionMatrixResponse: {endpoints, rows, cells[row][endpoint], nextCursor}' })
  versions(@CurrentProject() project: ProjectEntity, @Query() query: MatrixQuery): Promise<string> {
    return this.matrix.matrixJson(project, { kind: query.kind, limit: query.limit ?? 20, cursor: query.cursor });
  }

  @Get('evidence')
  evidence(@CurrentProject() project: ProjectEntity, @Query() query: EnvironmentQuery): Promise<EvidenceResponse> {
    return this.matrix.evidence(project, query.environment, query.pullRequest);
  }

  @Get('ci/:pr')
  ci(@CurrentProject() project: ProjectEntity, @Param('pr') pr: string): Promise<CiSummaryResponse> {
    return this.ciGate.summary(project, pr);
  }
}
