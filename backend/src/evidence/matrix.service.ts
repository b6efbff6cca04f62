import { Injectable } from '@nestjs/common';
import {
  type EvidenceResponse,
  MATRIX_KINDS,
  type MatrixKind,
  NOT_SEEN_VERSION,
  type VersionMatrixResponse,
  type VersionMatrixRow,
} from '@spectator/shared';
import { badInput } from '../common/errors';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import { matrixTexts } from '../views/matrix-texts';
import { type CurrentVersion, EvidenceRepository, type StoredMatrixRow } from './evidence.repository';

/** A page of the version matrix, its cells as the rows' stored texts joined by commas (see `MatrixService.page`). */
export interface MatrixPage extends Omit<VersionMatrixResponse, 'cells' | 'runtime'> {
  cellsJson: string;
}

/**
 * The text of a `VersionMatrixResponse` of `page` and `fields` beside its cells (each serialised
 * as it is): the cells text is spliced in, not parsed.
 */
export function matrixPageJson(
  page: MatrixPage,
  fields: Omit<VersionMatrixResponse, keyof MatrixPage | 'cells'>,
): string {
  const head = JSON.stringify({ endpoints: page.endpoints, rows: page.rows, ...fields });
  return `${head.slice(0, -1)},"cells":[${page.cellsJson}],"nextCursor":${JSON.stringify(page.nextCursor)}}`;
}

/**
 * Reads the precomputed evidence (no conformance work per request): the version matrix and
 * "which version runs there now". Both are a few indexed queries whatever the traffic volume.
 */
@Injectable()
export class MatrixService {
  constructor(
    private readonly repository: EvidenceRepository,
    private readonly versions: VersionStore,
  ) {}

  /**
   * A page of the matrix: documented endpoints (path, method order) × environment rows (CI runs,
   * staging builds, production builds; newest first within each kind), `limit` rows per page. The
   * cells are the rows' stored texts (views/matrix-texts.ts) joined as they are: a 100-row page is
   * 100,000 cells, never parsed. `toJson` of the page is the `VersionMatrixResponse` text;
   * matrix/matrix-page.service.ts adds the runtime beside the cells.
   */
  page(project: ProjectEntity, options: { kind?: MatrixKind; limit: number; cursor?: string }): Promise<MatrixPage> {
    // One snapshot: the columns and the rows' texts were written together.
    return this.repository.snapshot(async (db) => {
      const kinds = options.kind === undefined ? [...MATRIX_KINDS] : [options.kind];
      let after: { kind: MatrixKind; id: string } | null = null;
      if (options.cursor !== undefined) {
        const row = await this.repository.rowKind(db, project.id, options.cursor);
        if (row === null || !kinds.includes(row.kind))
          throw badInput(`cursor ${options.cursor} is not a row of this matrix`);
        after = row;
      }
      const rows: StoredMatrixRow[] = [];
      // One indexed query per kind, in order, until the page is full (one more row tells if there is a next page).
      for (const kind of kinds.slice(after === null ? 0 : kinds.indexOf(after.kind))) {
        const wanted = options.limit + 1 - rows.length;
        if (wanted <= 0) break;
        const continuing = after !== null && after.kind === kind ? after.id : null;
        rows.push(...(await this.repository.matrixRows(db, project.id, kind, wanted, continuing)));
      }
      const page = rows.slice(0, options.limit);
      const nextCursor = rows.length > options.limit ? (page[page.length - 1]?.id ?? null) : null;
      const columns = await this.versions.documentedCurrent(project.id, undefined, db);

      // A text built for fewer columns comes from a row created while an endpoint was being
      // documented (the column rewrite could not see it yet): built here until its next change.
      const stale = page.filter((r) => r.cellsJson !== null && r.cellsColumns !== columns.length).map((r) => r.id);
      const rebuilt = stale.length > 0 ? await matrixTexts.build(db, project.id, stale) : new Map<string, string>();
      const notSeen = matrixTexts.notSeen(columns.length);
      return {
        endpoints: columns.map((c) => ({
          id: c.endpointId,
          method: c.method,
          path: c.path,
          version: c.version,
          ...(c.removed ? { removed: true } : {}),
        })),
        rows: page.map((r): VersionMatrixRow => ({
          kind: r.kind,
          name: r.name,
          build: r.build,
          pullRequest: r.pullRequest,
          commit: r.commit,
          lastSeen: new Date(r.lastSeen).toISOString(),
        })),
        cellsJson: page.map((r) => rebuilt.get(r.id) ?? r.cellsJson ?? notSeen).join(','),
        nextCursor,
      };
    });
  }

  /**
   * Which version of each documented endpoint runs in an environment now: the newest row (by first
   * evidence) of that environment that saw it; for `ci`, of one pull request or, without one, of
   * any. Endpoints never seen there have a null version.
   * @throws DomainError BadInput for a pull request with another environment than `ci`.
   */
  async currentVersions(
    project: ProjectEntity,
    environment: MatrixKind,
    pullRequest?: string,
  ): Promise<CurrentVersion[]> {
    if (pullRequest !== undefined && environment !== 'ci') throw badInput('pullRequest is only for environment=ci');
    // Per pull request for `ci` when one is named; otherwise the environment's only scope, `''` (see environment-row.ts).
    const scope = environment !== 'ci' ? '' : (pullRequest ?? null);
    const endpoints = await this.versions.documented(project.id);
    return this.repository.currentVersions(project.id, endpoints, environment, scope);
  }

  /** `GET /evidence`: the version of each documented endpoint an environment runs now, `N/A` where never seen. */
  async evidence(project: ProjectEntity, environment: MatrixKind, pullRequest?: string): Promise<EvidenceResponse> {
    const rows = await this.currentVersions(project, environment, pullRequest);
    return {
      environment,
      pullRequest: pullRequest ?? null,
      endpoints: rows.map((r) => ({
        endpointId: r.endpointId,
        method: r.method,
        path: r.path,
        version: r.version ?? NOT_SEEN_VERSION,
        drift: r.drift ?? false,
        row: r.row,
        pullRequest: r.pullRequest,
        build: r.build,
        commit: r.commit,
        lastSeen: r.lastSeen === null ? null : new Date(r.lastSeen).toISOString(),
      })),
    };
  }
}
