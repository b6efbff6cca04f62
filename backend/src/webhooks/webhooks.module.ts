import { Module } from '@nestjs/common';
import { Notifier } from './notifier';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Transition events: the Notifier other modules emit through, and webhook deliveries. */
@Module({
  controllers: [WebhooksController],
  providers: [Notifier, WebhooksService],
  exports: [Notifier],
})
export class WebhooksModule {}
