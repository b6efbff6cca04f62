import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { PathHintsController } from './path-hints.controller';
import { PathHintsService } from './path-hints.service';
import { RegroupService } from './regroup.service';

/** Path templates users state (hints) and regrouping stored literal paths into a template. */
@Module({
  imports: [EventsModule, EvidenceModule],
  controllers: [PathHintsController],
  providers: [PathHintsService, RegroupService],
  exports: [PathHintsService, RegroupService],
})
export class PathsModule {}
