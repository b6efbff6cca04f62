import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { AuditPageResponse } from '@spectator/shared';
import { CurrentProject, RequireScope } from '../common/access';
import { AuditQuery } from './dto/audit.dto';
import { AuditService } from './audit.service';

@ApiTags('audit')
@ApiBearerAuth()
@Controller('projects/:p/audit')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  /** Who did what, newest first: `?limit=` (default 50), `?before=` (the previous page's `next`), `?action=`, `?actor=`. */
  @Get()
  @RequireScope('read')
  page(@CurrentProject() project: { id: string }, @Query() query: AuditQuery): Promise<AuditPageResponse> {
    return this.audit.page(project.id, {
      limit: query.limit ?? 50,
      before: query.before,
      action: query.action,
      actor: query.actor,
    });
  }
}
