import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { EventsModule } from '../events/events.module';
import { Notifier } from './notifier';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** Transition events: the Notifier other modules emit through, and webhook deliveries. */
@Module({
  imports: [AuditModule, EventsModule],
  controllers: [WebhooksController],
  providers: [WebhooksRepository, Notifier, WebhooksService],
  exports: [Notifier],
})
export class WebhooksModule {}
