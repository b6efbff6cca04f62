import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { WebhookDeliveryResponse, WebhookResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../auth/auth.guard';
import type { Principal } from '../auth/tokens.service';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { CreateWebhookDto, ListDeliveriesQuery } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

@ApiTags('webhooks')
@ApiBearerAuth()
@RequireScope('admin')
@Controller('projects/:p/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  create(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateWebhookDto,
  ): Promise<WebhookResponse> {
    return this.webhooks.create(project, principal, body);
  }

  @Get()
  list(@CurrentProject() project: ProjectEntity): Promise<WebhookResponse[]> {
    return this.webhooks.list(project);
  }

  @Delete(':id')
  @HttpCode(204)
  remove(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Param('id', uuidPipe('id')) id: string,
  ): Promise<void> {
    return this.webhooks.remove(project, principal, id);
  }

  @Get(':id/deliveries')
  deliveries(
    @CurrentProject() project: ProjectEntity,
    @Param('id', uuidPipe('id')) id: string,
    @Query() query: ListDeliveriesQuery,
  ): Promise<WebhookDeliveryResponse[]> {
    return this.webhooks.deliveries(project, id, query.limit ?? 50);
  }
}
