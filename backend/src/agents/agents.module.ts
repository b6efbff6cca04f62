import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { AgentsController } from './agents.controller';
import { AgentsRepository } from './agents.repository';
import { AgentsService } from './agents.service';

/** Agents of a project and their connections (presence). */
@Module({
  imports: [EventsModule],
  controllers: [AgentsController],
  providers: [AgentsRepository, AgentsService],
  exports: [AgentsService],
})
export class AgentsModule {}
