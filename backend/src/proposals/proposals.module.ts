import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { CapturesModule } from '../captures/captures.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { ProposalsController } from './proposals.controller';
import { ProposalsService } from './proposals.service';

/** Proposals and their lifecycle (open, approved, deployed to an environment). */
@Module({
  imports: [CapturesModule, EvidenceModule, AuditModule],
  controllers: [ProposalsController],
  providers: [ProposalsService],
  exports: [ProposalsService],
})
export class ProposalsModule {}
