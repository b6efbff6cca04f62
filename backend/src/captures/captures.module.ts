import { Module } from '@nestjs/common';
import { VersionsModule } from '../versions/versions.module';
import { ViewsModule } from '../views/views.module';
import { CapturesController } from './captures.controller';
import { CapturesRepository } from './captures.repository';
import { CapturesService } from './captures.service';
import { ShapeStore } from './shape-store';

/** Captures and their views (summary, undocumented, diffs, observed); the repository for their writers (ingest, regrouping). */
@Module({
  imports: [VersionsModule, ViewsModule],
  controllers: [CapturesController],
  providers: [CapturesRepository, CapturesService, ShapeStore],
  exports: [CapturesRepository, CapturesService, ShapeStore],
})
export class CapturesModule {}
