import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { AgentResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import type { ProjectEntity } from '../projects/project.entity';
import { PageLimitQuery } from '../common/page-limit.dto';
import { AgentsService } from './agents.service';

/** `?limit=` of the agents list (default 50). */
export class ListAgentsQuery extends PageLimitQuery {}

@ApiTags('agents')
@ApiBearerAuth()
@Controller('projects/:p')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  /** Agents (evidence sources) seen by the project, the most recently seen first, with whether each is connected now. */
  @Get('agents')
  @RequireScope('read')
  list(@CurrentProject() project: ProjectEntity, @Query() query: ListAgentsQuery): Promise<AgentResponse[]> {
    return this.agents.list(project, query.limit ?? 50);
  }
}
