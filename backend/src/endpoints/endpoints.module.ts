import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CapturesModule } from '../captures/captures.module';
import { EventsModule } from '../events/events.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { PathsModule } from '../paths/paths.module';
import { ProposalsModule } from '../proposals/proposals.module';
import { EndpointEntity } from './endpoint.entity';
import { EndpointsController } from './endpoints.controller';
import { EndpointsService } from './endpoints.service';

/** Documented endpoints and the documentation commit. */
@Module({
  imports: [
    TypeOrmModule.forFeature([EndpointEntity]),
    CapturesModule,
    ProposalsModule,
    EventsModule,
    EvidenceModule,
    PathsModule,
    AuditModule,
  ],
  controllers: [EndpointsController],
  providers: [EndpointsService],
  exports: [EndpointsService],
})
export class EndpointsModule {}
