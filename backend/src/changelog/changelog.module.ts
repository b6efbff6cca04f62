import { Module } from '@nestjs/common';
import { VersionsModule } from '../versions/versions.module';
import { ChangelogController } from './changelog.controller';
import { ChangelogRepository } from './changelog.repository';
import { ChangelogService } from './changelog.service';

/** What changed: per version of each endpoint (Markdown, Atom) and per release of an environment. */
@Module({
  imports: [VersionsModule],
  controllers: [ChangelogController],
  providers: [ChangelogRepository, ChangelogService],
})
export class ChangelogModule {}
