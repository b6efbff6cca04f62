import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { VersionsModule } from '../versions/versions.module';
import { ViewsModule } from '../views/views.module';
import { CaptureEntity } from './capture.entity';
import { CapturesController } from './captures.controller';
import { CapturesService } from './captures.service';
import { ShapeStore } from './shape-store';

/** Captures and their views (summary, undocumented, diffs, observed). */
@Module({
  imports: [TypeOrmModule.forFeature([CaptureEntity]), VersionsModule, ViewsModule],
  controllers: [CapturesController],
  providers: [CapturesService, ShapeStore],
  exports: [CapturesService, ShapeStore, TypeOrmModule],
})
export class CapturesModule {}
