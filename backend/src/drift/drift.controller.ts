import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { DriftCellResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import type { ProjectEntity } from '../projects/project.entity';
import { DriftService } from './drift.service';

@ApiTags('drift')
@ApiBearerAuth()
@Controller('projects/:p')
export class DriftController {
  constructor(private readonly drift: DriftService) {}

  /** Every drifting cell of the matrix with the first pull request, staging and production build where it was seen. */
  @Get('drift')
  @RequireScope('read')
  list(@CurrentProject() project: ProjectEntity): Promise<DriftCellResponse[]> {
    return this.drift.list(project);
  }
}
