import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { CapturesModule } from '../captures/captures.module';
import { CommonModule } from '../common/common.module';
import { ConsumersModule } from '../consumers/consumers.module';
import { EndpointsModule } from '../endpoints/endpoints.module';
import { EventsModule } from '../events/events.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { HealthModule } from '../health/health.module';
import { PathsModule } from '../paths/paths.module';
import { ProjectsModule } from '../projects/projects.module';
import { RuntimeModule } from '../runtime/runtime.module';
import { AgentGateway } from './agent-gateway';
import { EvidenceFolder } from './evidence-folder';
import { IngestRepository } from './ingest.repository';
import { IngestService } from './ingest.service';

/** The agents' WebSocket stream: wire validation, batches written and acknowledged. */
@Module({
  imports: [
    AgentsModule,
    CapturesModule,
    CommonModule,
    ConsumersModule,
    EndpointsModule,
    EventsModule,
    EvidenceModule,
    HealthModule,
    PathsModule,
    ProjectsModule,
    RuntimeModule,
  ],
  providers: [IngestRepository, IngestService, EvidenceFolder, AgentGateway],
})
export class IngestModule {}
