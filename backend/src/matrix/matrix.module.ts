import { Module } from '@nestjs/common';
import { EvidenceModule } from '../evidence/evidence.module';
import { RuntimeModule } from '../runtime/runtime.module';
import { MatrixController } from './matrix.controller';
import { MatrixPageService } from './matrix-page.service';

/** The version matrix read by people: evidence's cells with runtime's figures beside them (above both). */
@Module({
  imports: [EvidenceModule, RuntimeModule],
  controllers: [MatrixController],
  providers: [MatrixPageService],
})
export class MatrixModule {}
