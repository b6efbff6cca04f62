import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CapturesModule } from '../captures/captures.module';
import { ConsumersModule } from '../consumers/consumers.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { VersionsModule } from '../versions/versions.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { ProposalLifecycle } from './proposal-lifecycle';
import { ProposalRegrouping } from './proposal-regrouping';
import { ProposalsController } from './proposals.controller';
import { ProposalsRepository } from './proposals.repository';
import { ProposalsService } from './proposals.service';

/** Proposals and their lifecycle (open, approved, deployed to an environment): the one writer of it. */
@Module({
  imports: [CapturesModule, ConsumersModule, EvidenceModule, VersionsModule, WebhooksModule, AuditModule],
  controllers: [ProposalsController],
  providers: [ProposalsRepository, ProposalLifecycle, ProposalRegrouping, ProposalsService],
  exports: [ProposalLifecycle, ProposalRegrouping, ProposalsService],
})
export class ProposalsModule {}
