import { Module } from '@nestjs/common';
import { CapturesModule } from '../captures/captures.module';
import { VersionsModule } from '../versions/versions.module';
import { UsageController } from './usage.controller';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';

/** Usage from stored evidence: last seen per part of each endpoint, orphans, zombies, safe to remove; deprecation marks. */
@Module({
  imports: [CapturesModule, VersionsModule],
  controllers: [UsageController],
  providers: [UsageRepository, UsageService],
  exports: [UsageService],
})
export class UsageModule {}
