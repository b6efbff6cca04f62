import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { CiSummaryResponse, CompareResponse, DiffOriginsResponse, EvidenceResponse } from '@spectator/shared';
import { afterKey } from '../captures/dto/captures.dto';
import { badInput } from '../common/errors';
import { uuidPipe } from '../common/validation';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import type { ProjectEntity } from '../projects/project.entity';
import { CiGateService } from './ci-gate.service';
import { CompareService } from './compare.service';
import { ConsumerBuildQuery } from '../consumers/dto/consumers.dto';
import { DiffOriginsService } from './diff-origins.service';
import { CompareQuery, DEFAULT_ORIGINS_PAGE, DiffOriginsQuery, EnvironmentQuery } from './dto/evidence.dto';
import { MatrixService } from './matrix.service';

@ApiTags('evidence')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p')
export class EvidenceController {
  constructor(
    private readonly matrix: MatrixService,
    private readonly ciGate: CiGateService,
    private readonly comparison: CompareService,
    private readonly origins: DiffOriginsService,
  ) {}

  @Get('evidence')
  evidence(@CurrentProject() project: ProjectEntity, @Query() query: EnvironmentQuery): Promise<EvidenceResponse> {
    return this.matrix.evidence(project, query.environment, query.pullRequest);
  }

  /** What clients of `from` would see change if `to` replaced it, per documented endpoint seen on either side. */
  @Get('compare')
  compare(@CurrentProject() project: ProjectEntity, @Query() query: CompareQuery): Promise<CompareResponse> {
    if (query.fromPullRequest !== undefined && query.from !== 'ci')
      throw badInput('fromPullRequest is only for from=ci');
    if (query.toPullRequest !== undefined && query.to !== 'ci') throw badInput('toPullRequest is only for to=ci');
    return this.comparison.compare(
      project,
      { environment: query.from, pullRequest: query.fromPullRequest ?? null },
      { environment: query.to, pullRequest: query.toPullRequest ?? null },
    );
  }

  /** Where the traffic of each diff of one page of a capture's diffs was first seen (the diffs' paging). */
  @Get('captures/:id/diffs/origins')
  diffOrigins(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() page: DiffOriginsQuery,
  ): Promise<DiffOriginsResponse[]> {
    return this.origins.ofCapture(project, id, afterKey(page), page.limit ?? DEFAULT_ORIGINS_PAGE);
  }

  /** `?days=&build=`: the window of `consumers`, and the production build whose consumers they are (every one by default). */
  @Get('ci/:pr')
  ci(
    @CurrentProject() project: ProjectEntity,
    @Param('pr') pr: string,
    @Query() query: ConsumerBuildQuery,
  ): Promise<CiSummaryResponse> {
    return this.ciGate.summary(project, pr, query.days, query.build);
  }
}
