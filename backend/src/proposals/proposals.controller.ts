import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { BlastRadiusResponse, ProposalResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import { uuidPipe } from '../common/validation';
import { ConsumersService } from '../consumers/consumers.service';
import { ConsumersQuery } from '../consumers/dto/consumers.dto';
import type { ProjectEntity } from '../projects/project.entity';
import { CreateProposalDto, ListProposalsQuery } from './dto/proposal.dto';
import { ProposalsService } from './proposals.service';

@ApiTags('proposals')
@ApiBearerAuth()
@Controller('projects/:p/proposals')
export class ProposalsController {
  constructor(
    private readonly proposals: ProposalsService,
    private readonly consumers: ConsumersService,
  ) {}

  @Post()
  @RequireScope('write')
  create(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateProposalDto,
  ): Promise<ProposalResponse> {
    return this.proposals.create(project, principal, body);
  }

  @Get()
  @RequireScope('read')
  list(@CurrentProject() project: ProjectEntity, @Query() query: ListProposalsQuery): Promise<ProposalResponse[]> {
    return this.proposals.list(project, query.limit ?? 50);
  }

  @Get(':id')
  @RequireScope('read')
  get(@CurrentProject() project: ProjectEntity, @Param('id', uuidPipe('id')) id: string): Promise<ProposalResponse> {
    return this.proposals.get(project, id);
  }

  /** Who the proposal's breaking changes break: the consumers that called a broken part (production, 30 days by default). */
  @Get(':id/blast-radius')
  @RequireScope('read')
  async blastRadius(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: ConsumersQuery,
  ): Promise<BlastRadiusResponse> {
    const proposal = await this.proposals.get(project, id);
    return this.consumers.blastRadius(
      project,
      proposal.endpoints,
      query.environment ?? 'production',
      query.days,
      query.build,
    );
  }

  @Post(':id/approve')
  @HttpCode(200)
  @RequireScope('approve')
  approve(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Param('id', uuidPipe('id')) id: string,
  ): Promise<ProposalResponse> {
    return this.proposals.approve(project, principal, id);
  }
}
