import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { DocumentationResponse, EndpointResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { DocumentationDto } from './dto/documentation.dto';
import { type EndpointVersionResponse, EndpointsService } from './endpoints.service';

@ApiTags('endpoints')
@ApiBearerAuth()
@Controller('projects/:p')
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Get('endpoints')
  @RequireScope('read')
  list(@CurrentProject() project: ProjectEntity): Promise<EndpointResponse[]> {
    return this.endpoints.list(project);
  }

  @Get('endpoints/:id/versions')
  @RequireScope('read')
  versions(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
  ): Promise<EndpointVersionResponse[]> {
    return this.endpoints.versions(project, id);
  }

  @Post('documentation')
  @RequireScope('write')
  commit(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: DocumentationDto,
  ): Promise<DocumentationResponse> {
    return this.endpoints.commit(project, principal, body);
  }
}
