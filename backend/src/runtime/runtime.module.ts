import { Module } from '@nestjs/common';
import { CapturesModule } from '../captures/captures.module';
import { CommonModule } from '../common/common.module';
import { PartitionsModule } from '../partitions/partitions.module';
import { VersionsModule } from '../versions/versions.module';
import { RuntimeController } from './runtime.controller';
import { RuntimeRepository } from './runtime.repository';
import { RuntimeGateService } from './runtime-gate.service';
import { RuntimeService } from './runtime.service';

/** Runtime evidence per endpoint, version and environment: written by ingest, rolled up, read as series. */
@Module({
  imports: [CommonModule, CapturesModule, VersionsModule, PartitionsModule],
  controllers: [RuntimeController],
  providers: [RuntimeRepository, RuntimeService, RuntimeGateService],
  exports: [RuntimeService],
})
export class RuntimeModule {}
