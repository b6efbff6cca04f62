import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { CiSummaryResponse, EvidenceResponse, VersionMatrixResponse } from '@spectator/shared';
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

  @Get('versions')
  versions(@CurrentProject() project: ProjectEntity, @Query() query: MatrixQuery): Promise<VersionMatrixResponse> {
    return this.matrix.matrix(project, { kind: query.kind, limit: query.limit ?? 20, cursor: query.cursor });
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
