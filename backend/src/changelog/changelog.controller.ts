import { Controller, Get, Header, Inject, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { ChangelogResponse, ReleasesResponse } from '@spectator/shared';
import type { Request } from 'express';
import { CurrentProject, RequireScope } from '../auth/auth.guard';
import { RUNTIME, type Runtime } from '../config/runtime';
import type { ProjectEntity } from '../projects/project.entity';
import { changelogAtom, changelogMarkdown } from './changelog-render';
import { ChangelogService } from './changelog.service';
import { ChangelogQuery, ReleasesQuery } from './dto/changelog.dto';

@ApiTags('changelog')
@ApiBearerAuth()
@RequireScope('read')
@Controller('projects/:p')
export class ChangelogController {
  constructor(
    private readonly changelogs: ChangelogService,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {}

  @Get('changelog')
  changelog(@CurrentProject() project: ProjectEntity, @Query() query: ChangelogQuery): Promise<ChangelogResponse> {
    return this.changelogs.changelog(project, query.limit ?? 50);
  }

  @Get('changelog.md')
  @Header('Content-Type', 'text/markdown; charset=utf-8')
  @ApiOkResponse({ description: 'the changelog as Markdown' })
  async markdown(@CurrentProject() project: ProjectEntity, @Query() query: ChangelogQuery): Promise<string> {
    return changelogMarkdown(await this.changelogs.changelog(project, query.limit ?? 50));
  }

  /** Links point at the dashboard: SPECTATOR_PUBLIC_URL, else the address this request came to. */
  @Get('changelog.atom')
  @Header('Content-Type', 'application/atom+xml; charset=utf-8')
  @ApiOkResponse({ description: 'the changelog as an Atom 1.0 feed' })
  async atom(
    @CurrentProject() project: ProjectEntity,
    @Query() query: ChangelogQuery,
    @Req() request: Request,
  ): Promise<string> {
    const base = this.runtime.config.publicUrl ?? `${request.protocol}://${request.get('host') ?? 'localhost'}`;
    return changelogAtom(await this.changelogs.changelog(project, query.limit ?? 50), base);
  }

  @Get('changelog/releases')
  releases(@CurrentProject() project: ProjectEntity, @Query() query: ReleasesQuery): Promise<ReleasesResponse> {
    return this.changelogs.releases(project, query.environment, query.limit ?? 20);
  }
}
