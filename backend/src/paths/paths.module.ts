import { Module } from '@nestjs/common';
import { CapturesModule } from '../captures/captures.module';
import { ConsumersModule } from '../consumers/consumers.module';
import { EventsModule } from '../events/events.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { ProjectsModule } from '../projects/projects.module';
import { ProposalsModule } from '../proposals/proposals.module';
import { RuntimeModule } from '../runtime/runtime.module';
import { VersionsModule } from '../versions/versions.module';
import { PathHintsController } from './path-hints.controller';
import { PathHintsService } from './path-hints.service';
import { PathsRepository } from './paths.repository';
import { RegroupService } from './regroup.service';

/** Path templates users state (hints) and regrouping stored literal paths into a template. */
@Module({
  imports: [
    CapturesModule,
    ConsumersModule,
    EventsModule,
    EvidenceModule,
    ProjectsModule,
    ProposalsModule,
    RuntimeModule,
    VersionsModule,
  ],
  controllers: [PathHintsController],
  providers: [PathsRepository, PathHintsService, RegroupService],
  exports: [PathHintsService, RegroupService],
})
export class PathsModule {}
