import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module';
import { HealthModule } from '../health/health.module';
import { EventsGateway } from './events.gateway';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';

/** Dashboard events across replicas and their WebSocket (`/projects/{p}/events`). */
@Module({
  imports: [CommonModule, HealthModule],
  providers: [EventsRepository, EventsService, EventsGateway],
  exports: [EventsService],
})
export class EventsModule {}
