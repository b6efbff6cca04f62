import { Module } from '@nestjs/common';
import { CapturesModule } from '../captures/captures.module';
import { CommonModule } from '../common/common.module';
import { ConsumersModule } from '../consumers/consumers.module';
import { VersionsModule } from '../versions/versions.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { CiGateService } from './ci-gate.service';
import { CompareService } from './compare.service';
import { DiffOriginsService } from './diff-origins.service';
import { EvidenceController } from './evidence.controller';
import { EvidenceRepository } from './evidence.repository';
import { EvidenceService } from './evidence.service';
import { MatrixService } from './matrix.service';

/** Runtime evidence: which version each environment runs (the matrix), comparisons and the CI gate. */
@Module({
  imports: [CapturesModule, CommonModule, ConsumersModule, VersionsModule, WebhooksModule],
  controllers: [EvidenceController],
  providers: [EvidenceRepository, EvidenceService, MatrixService, CompareService, CiGateService, DiffOriginsService],
  exports: [EvidenceService, MatrixService],
})
export class EvidenceModule {}
