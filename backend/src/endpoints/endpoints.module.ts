import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CapturesModule } from '../captures/captures.module';
import { EventsModule } from '../events/events.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { PathsModule } from '../paths/paths.module';
import { ProposalsModule } from '../proposals/proposals.module';
import { EndpointsController } from './endpoints.controller';
import { EndpointsRepository } from './endpoints.repository';
import { EndpointsService } from './endpoints.service';

/** Documented endpoints and the documentation commit. */
@Module({
  imports: [CapturesModule, ProposalsModule, EventsModule, EvidenceModule, PathsModule, AuditModule],
  controllers: [EndpointsController],
  providers: [EndpointsRepository, EndpointsService],
  exports: [EndpointsService],
})
export class EndpointsModule {}
