import { Injectable } from '@nestjs/common';
import {
  type ChangelogEntry,
  type ChangelogResponse,
  diffEndpoint,
  formatVersion,
  type MatrixKind,
  type Release,
  type ReleaseBuild,
  type ReleaseEndpoint,
  type ReleasesResponse,
} from '@spectator/shared';
import { toChangeResponse } from '../captures/captures.service';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import { type BuildCellRow, type BuildRow, ChangelogRepository } from './changelog.repository';

function buildOf(row: BuildRow): ReleaseBuild {
  return {
    name: row.name,
    build: row.build,
    commit: row.commit,
    firstSeen: row.firstSeen.toISOString(),
    lastSeen: row.lastSeen.toISOString(),
  };
}

/**
 * What changed, in words a team reads: per version of each endpoint (breaking or not, the
 * proposal and who approved it, where it runs now), and per release of an environment (build A →
 * build B: the endpoints whose version differs between the two builds' evidence).
 */
@Injectable()
export class ChangelogService {
  constructor(
    private readonly repository: ChangelogRepository,
    private readonly versions: VersionStore,
  ) {}

  /** The newest `limit` versions of the project's endpoints, newest first. */
  async changelog(project: ProjectEntity, limit: number): Promise<ChangelogResponse> {
    const rows = await this.repository.versions(project.id, limit);
    const runs = await this.repository.runsIn(
      project.id,
      rows.map((row) => row.versionId),
    );
    const entries = rows.map((row): ChangelogEntry => {
      const changes = row.changes.map(toChangeResponse);
      const previous =
        row.previousMajor === null || row.previousMinor === null
          ? null
          : formatVersion({ major: row.previousMajor, minor: row.previousMinor });
      return {
        versionId: row.versionId,
        endpointId: row.endpointId,
        method: row.method,
        path: row.path,
        version: formatVersion(row),
        previous,
        // A new major is breaking by the versioning rules, whatever its recorded changes say (an imported plan).
        breaking:
          (row.previousMajor !== null && row.major > row.previousMajor) || changes.some((change) => change.breaking),
        changes,
        createdAt: row.createdAt.toISOString(),
        proposal:
          row.proposalId === null
            ? null
            : {
                id: row.proposalId,
                title: row.title ?? '',
                createdBy: row.createdBy,
                approvedBy: row.approvedBy,
                approvedAt: row.approvedAt?.toISOString() ?? null,
              },
        runsIn: runs
          .filter((run) => run.versionId === row.versionId)
          .map((run) => ({
            kind: run.kind,
            name: run.name,
            pullRequest: run.pullRequest,
            build: run.build,
            commit: run.commit,
            lastSeen: run.lastSeen.toISOString(),
          })),
      };
    });
    return { project: project.slug, projectName: project.name, entries };
  }

  /**
   * The releases of an environment, newest first: each build (by first evidence) against the one
   * before it, with the endpoints whose version differs. An endpoint a build's traffic did not
   * reach is not taken as gone: it shows as `not seen` in that build.
   */
  async releases(project: ProjectEntity, kind: MatrixKind, limit: number): Promise<ReleasesResponse> {
    // One more build than asked, so the oldest release shown has the build before it.
    const builds = await this.repository.builds(project.id, kind, limit + 1);
    const cells = await this.repository.cells(builds.map((build) => build.id));
    const byRow = new Map<string, BuildCellRow[]>();
    for (const cell of cells) byRow.set(cell.rowId, [...(byRow.get(cell.rowId) ?? []), cell]);
    const ids = cells.flatMap((cell) => (cell.versionId === null ? [] : [cell.versionId]));
    const documented = await this.versions.load([...new Set(ids)]);
    const releases: Release[] = [];
    for (let i = 0; i < Math.min(limit, builds.length); i++) {
      const to = builds[i] as BuildRow;
      const from = builds[i + 1] ?? null;
      const before = new Map((from === null ? [] : (byRow.get(from.id) ?? [])).map((cell) => [cell.endpointId, cell]));
      const endpoints: ReleaseEndpoint[] = [];
      for (const after of byRow.get(to.id) ?? []) {
        const old = before.get(after.endpointId);
        if (old !== undefined && old.version === after.version && old.drift === after.drift) continue;
        const older = old?.versionId == null ? undefined : documented.get(old.versionId);
        const newer = after.versionId === null ? undefined : documented.get(after.versionId);
        const changes = older && newer && older.id !== newer.id ? diffEndpoint(older, newer).map(toChangeResponse) : [];
        endpoints.push({
          endpointId: after.endpointId,
          method: after.method,
          path: after.path,
          from: old === undefined ? null : old.version,
          to: after.version,
          drift: after.drift,
          breaking: changes.some((change) => change.breaking),
          changes,
        });
      }
      releases.push({ from: from === null ? null : buildOf(from), to: buildOf(to), endpoints });
    }
    return { environment: kind, releases };
  }
}
