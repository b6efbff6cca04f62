import { Module } from '@nestjs/common';
import { VersionStore } from './version-store';

/** Documented versions of endpoints: the store views read them through (writing is `version-writer.ts`). */
@Module({
  providers: [VersionStore],
  exports: [VersionStore],
})
export class VersionsModule {}
