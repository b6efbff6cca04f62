import { Module } from '@nestjs/common';
import { EvidenceModule } from '../evidence/evidence.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DriftController } from './drift.controller';
import { DriftRepository } from './drift.repository';
import { DriftService } from './drift.service';

/** Where drift began: the first pull request, commit and build of each drifting cell's traffic, and `drift.appeared`. */
@Module({
  imports: [EvidenceModule, WebhooksModule],
  controllers: [DriftController],
  providers: [DriftRepository, DriftService],
})
export class DriftModule {}
