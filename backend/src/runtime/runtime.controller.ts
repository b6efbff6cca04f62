import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type {
  CaptureRuntimeResponse,
  CiRuntimeResponse,
  RuntimeResponse,
  VersionShareResponse,
} from '@spectator/shared';
import { CapturesService } from '../captures/captures.service';
import { environmentRowOf } from '../evidence/environment-row';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { CiRuntimeQuery, RouteRuntimeQuery, RuntimeQuery } from './dto/runtime.dto';
import { RuntimeGateService } from './runtime-gate.service';
import { RuntimeService } from './runtime.service';

@ApiTags('runtime')
@ApiBearerAuth()
@Controller('projects/:p')
export class RuntimeController {
  constructor(
    private readonly runtime: RuntimeService,
    private readonly gate: RuntimeGateService,
    private readonly captures: CapturesService,
  ) {}

  @Get('endpoints/:id/runtime')
  @RequireScope('read')
  series(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: RuntimeQuery,
  ): Promise<RuntimeResponse> {
    return this.runtime.series(project, id, query);
  }

  /** The same by method and path: undocumented endpoints have no id to ask by. */
  @Get('runtime')
  @RequireScope('read')
  routeSeries(@CurrentProject() project: ProjectEntity, @Query() query: RouteRuntimeQuery): Promise<RuntimeResponse> {
    const { method, path, ...rest } = query;
    return this.runtime.routeSeries(project, { method, path }, rest);
  }

  /** Which versions an environment's traffic ran on: every endpoint together over time, and per endpoint. */
  @Get('runtime/share')
  @RequireScope('read')
  share(@CurrentProject() project: ProjectEntity, @Query() query: RuntimeQuery): Promise<VersionShareResponse> {
    return this.runtime.share(project, query);
  }

  /** Every endpoint's runtime in a capture's environment row (its pull request, its build), undocumented ones too. */
  @Get('captures/:id/runtime')
  @RequireScope('read')
  async captureRuntime(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
  ): Promise<CaptureRuntimeResponse> {
    const capture = await this.captures.byId(project, id);
    const row = environmentRowOf({
      kind: capture.environmentKind,
      ...(capture.pullRequest === null ? {} : { pullRequest: capture.pullRequest }),
      ...(capture.build === null ? {} : { build: capture.build }),
      ...(capture.commit === null ? {} : { commit: capture.commit }),
    });
    if (row === null) return { environment: null, endpoints: [] };
    return {
      environment: { kind: row.kind, name: row.name },
      endpoints: await this.runtime.rowFigures(project.id, row),
    };
  }

  /** The runtime CI gate's figures: a pull request's counts per endpoint and version beside production's. */
  @Get('ci/:pr/runtime')
  @RequireScope('read')
  ciRuntime(
    @CurrentProject() project: ProjectEntity,
    @Param('pr') pr: string,
    @Query() query: CiRuntimeQuery,
  ): Promise<CiRuntimeResponse> {
    return this.gate.againstProduction(project, pr, query.productionDays);
  }
}
