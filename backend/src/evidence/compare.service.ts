import { Injectable } from '@nestjs/common';
import {
  type CompareEndpoint,
  type CompareResponse,
  type CompareSide,
  type CompareVersion,
  diffEndpoint,
  NOT_SEEN_VERSION,
} from '@spectator/shared';
import { toChangeResponse } from '../captures/captures.service';
import { badInput } from '../common/errors';
import { VersionStore } from '../versions/version-store';
import type { ProjectEntity } from '../projects/project.entity';
import type { CurrentVersion } from './evidence.repository';
import { MatrixService } from './matrix.service';

const NOT_SEEN: CompareVersion = {
  version: NOT_SEEN_VERSION,
  drift: false,
  build: null,
  pullRequest: null,
  commit: null,
};

function sideVersion(current: CurrentVersion | undefined): CompareVersion {
  if (current?.version == null) return NOT_SEEN;
  return {
    version: current.version,
    drift: current.drift ?? false,
    build: current.build,
    pullRequest: current.pullRequest,
    commit: current.commit,
  };
}

/**
 * Compares the versions two environments run: for a release review, "what would clients of
 * production see change if staging's build replaced it", or a pull request against production.
 * Each side is the evidence view (the newest evidence per endpoint); an endpoint whose versions
 * differ gets the changes between the two versions' documentation, classified as everywhere.
 */
@Injectable()
export class CompareService {
  constructor(
    private readonly matrix: MatrixService,
    private readonly versions: VersionStore,
  ) {}

  async compare(project: ProjectEntity, from: CompareSide, to: CompareSide): Promise<CompareResponse> {
    if (from.environment === to.environment && from.pullRequest === to.pullRequest) {
      throw badInput(
        `from and to are the same (${from.environment}${from.pullRequest === null ? '' : ` pull request ${from.pullRequest}`})`,
      );
    }
    const [fromRows, toRows] = await Promise.all([
      this.matrix.currentVersions(project, from.environment, from.pullRequest ?? undefined),
      this.matrix.currentVersions(project, to.environment, to.pullRequest ?? undefined),
    ]);
    const toById = new Map(toRows.map((row) => [row.endpointId, row]));
    const ids = [...fromRows, ...toRows].flatMap((row) => (row.versionId === null ? [] : [row.versionId]));
    const versions = await this.versions.load([...new Set(ids)]);

    const endpoints: CompareEndpoint[] = [];
    for (const before of fromRows) {
      const after = toById.get(before.endpointId);
      const seenBefore = before.version !== null;
      const seenAfter = after?.version != null;
      if (!seenBefore && !seenAfter) continue;
      const older = before.versionId === null ? undefined : versions.get(before.versionId);
      const newer = after?.versionId == null ? undefined : versions.get(after.versionId);
      const changes = older && newer && older.id !== newer.id ? diffEndpoint(older, newer).map(toChangeResponse) : [];
      endpoints.push({
        endpointId: before.endpointId,
        method: before.method,
        path: before.path,
        from: sideVersion(before),
        to: sideVersion(after),
        status: !seenBefore
          ? 'only in to'
          : !seenAfter
            ? 'only in from'
            : before.version === after?.version
              ? 'same'
              : 'changed',
        breaking: changes.some((change) => change.breaking),
        changes,
      });
    }
    return { from, to, breaking: endpoints.some((endpoint) => endpoint.breaking), endpoints };
  }
}
