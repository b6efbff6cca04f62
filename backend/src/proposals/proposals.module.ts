import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CapturesModule } from '../captures/captures.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ProposalLifecycle } from './proposal-lifecycle';
import { ProposalsController } from './proposals.controller';
import { ProposalsService } from './proposals.service';

/** Proposals and their lifecycle (open, approved, deployed to an environment): the one writer of it. */
@Module({
  imports: [CapturesModule, EvidenceModule, WebhooksModule, AuditModule],
  controllers: [ProposalsController],
  providers: [ProposalLifecycle, ProposalsService],
  exports: [ProposalLifecycle, ProposalsService],
})
export class ProposalsModule {}
