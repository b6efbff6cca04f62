import { Module } from '@nestjs/common';
import { CaptureViews } from './capture-views';

/** Keeping capture views up to date (snapshots, patching); the views themselves are their owners'. */
@Module({
  providers: [CaptureViews],
  exports: [CaptureViews],
})
export class ViewsModule {}
