import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type {
  BlastRadiusResponse,
  ConsumerLabelResponse,
  ConsumersResponse,
  EndpointConsumersResponse,
} from '@spectator/shared';
import { CapturesService } from '../captures/captures.service';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { ConsumerLabelDto, ConsumersQuery } from './dto/consumers.dto';
import { ConsumersService } from './consumers.service';

/** Who calls what, by pseudonym or label (docs/api.md, Consumers). */
@ApiTags('consumers')
@ApiBearerAuth()
@Controller('projects/:p')
export class ConsumersController {
  constructor(
    private readonly consumers: ConsumersService,
    private readonly captures: CapturesService,
  ) {}

  @Get('consumers')
  @RequireScope('read')
  list(@CurrentProject() project: ProjectEntity, @Query() query: ConsumersQuery): Promise<ConsumersResponse> {
    return this.consumers.list(project, query.environment ?? 'production', query.days, query.build);
  }

  @Get('endpoints/:id/consumers')
  @RequireScope('read')
  ofEndpoint(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: ConsumersQuery,
  ): Promise<EndpointConsumersResponse> {
    return this.consumers.ofEndpoint(project, id, query.environment ?? null, query.days, query.build);
  }

  /** Who one capture's breaking diffs break: the consumers that called a broken part (production, 30 days by default). */
  @Get('captures/:id/blast-radius')
  @RequireScope('read')
  async captureBlastRadius(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: ConsumersQuery,
  ): Promise<BlastRadiusResponse> {
    const diffs = await this.captures.diffsOf(project, await this.captures.byId(project, id));
    return this.consumers.blastRadius(
      project,
      diffs.filter((diff) => diff.breaking),
      query.environment ?? 'production',
      query.days,
      query.build,
    );
  }

  @Put('consumers/:consumer/label')
  @RequireScope('write')
  label(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Param('consumer') consumer: string,
    @Body() body: ConsumerLabelDto,
  ): Promise<ConsumerLabelResponse> {
    return this.consumers.setLabel(project, consumer, body.label, principal.name);
  }

  @Delete('consumers/:consumer/label')
  @RequireScope('write')
  @HttpCode(204)
  async unlabel(@CurrentProject() project: ProjectEntity, @Param('consumer') consumer: string): Promise<void> {
    await this.consumers.removeLabel(project, consumer);
  }
}
