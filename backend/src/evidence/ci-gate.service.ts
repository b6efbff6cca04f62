import { Injectable } from '@nestjs/common';
import type { CiSummaryResponse, DiffResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import { CapturesService, type ExchangeKey, offendingExchangesOf } from '../captures/captures.service';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { FoldsBeforeRead } from '../common/folds-before-read';
import { ConsumersService } from '../consumers/consumers.service';
import type { ProjectEntity } from '../projects/project.entity';
import { CompareService } from './compare.service';
import { DiffOriginsService } from './diff-origins.service';
import { pullRequestRowName } from './environment-row';

/** A pull request number or name as agents send it (`--pr`). */
export const PULL_REQUEST_PATTERN = /^[A-Za-z0-9._-]{1,200}$/;

/** How many captures of one commit are summarised at most (a CI run restarts its app a few times). */
export const CAPTURES_PER_COMMIT = 50;

/**
 * What a CI gate needs to know about a pull request: the undocumented endpoints and the diffs
 * (with breaking flags) of its CI captures at its newest commit, merged over those captures.
 * Older commits of the pull request are left out: a later push may have fixed them. And what it
 * changes for production's clients: its CI evidence's versions against production's.
 */
@Injectable()
export class CiGateService {
  constructor(
    private readonly captures: CapturesService,
    private readonly comparison: CompareService,
    private readonly consumers: ConsumersService,
    private readonly origins: DiffOriginsService,
    private readonly folds: FoldsBeforeRead,
  ) {}

  /**
   * `days`: the window of `consumers`, who in production called what the breaking changes break;
   * `build`: of that production build only (its matrix row name), every build by default.
   * @throws DomainError CaptureNotFound when the pull request has no CI capture, BuildNotFound when
   * production has no such build.
   */
  async summary(
    project: ProjectEntity,
    pullRequest: string,
    days?: number,
    build?: string,
  ): Promise<CiSummaryResponse> {
    if (!PULL_REQUEST_PATTERN.test(pullRequest))
      throw badInput('pr must be a pull request number or name (letters, digits, . _ -)');
    // Its batches are acknowledged at commit and folded after: the read waits for their folds.
    await this.folds.before(project, { kind: 'ci', pullRequest });
    const captures = await this.captures.ciCapturesOf(project, pullRequest, CAPTURES_PER_COMMIT);
    const newest = captures[0];
    if (newest === undefined)
      throw new DomainError(
        ErrorCode.CaptureNotFound,
        `pull request ${pullRequest} has no CI capture in project ${project.slug}`,
      );
    const undocumented = new Map<string, UndocumentedEndpointResponse>();
    const diffs = new Map<string, DiffResponse>();
    // The exchanges each endpoint's diffs were made of, in any of the captures: where they were first seen.
    const exchanges = new Map<string, ExchangeKey[]>();
    for (const capture of captures) {
      const [seen, changed] = await Promise.all([
        this.captures.undocumentedOf(project, capture),
        this.captures.diffsOf(project, capture),
      ]);
      for (const u of seen) {
        const key = `${u.method} ${u.path}`;
        const before = undocumented.get(key);
        undocumented.set(
          key,
          before ? { ...before, interactions: before.interactions + u.interactions, count: before.count + u.count } : u,
        );
      }
      for (const d of changed) {
        const key = `${d.method} ${d.path}`;
        const before = diffs.get(key);
        // One diff per endpoint: the most severe one seen across the captures (breaking first).
        if (!before || (d.breaking && !before.breaking)) diffs.set(key, d);
        exchanges.set(key, [...(exchanges.get(key) ?? []), ...offendingExchangesOf(d)]);
      }
    }
    const byRoute = <T extends { method: string; path: string }>(a: T, b: T): number =>
      a.path.localeCompare(b.path) || a.method.localeCompare(b.method);
    const sorted = [...diffs.values()].sort(byRoute);
    const origins = await this.origins.originsOf(
      project,
      sorted.map((d) => ({ method: d.method, path: d.path, exchanges: exchanges.get(`${d.method} ${d.path}`) ?? [] })),
      { kind: 'ci', name: pullRequestRowName(pullRequest) },
    );
    const diffList = sorted.map((d, index) => ({ ...d, ...origins[index] }));
    const compared = await this.comparison.compare(
      project,
      { environment: 'production', pullRequest: null },
      { environment: 'ci', pullRequest },
    );
    // Endpoints the CI runs did not exercise are no change: CI rarely calls every endpoint.
    const againstProduction = {
      ...compared,
      endpoints: compared.endpoints.filter(
        (endpoint) => endpoint.status === 'changed' || endpoint.status === 'only in to',
      ),
    };
    // Who in production these breaking changes break: against the documentation and against production's versions.
    const consumers = await this.consumers.blastRadius(
      project,
      [...diffList, ...againstProduction.endpoints].filter((endpoint) => endpoint.breaking),
      'production',
      days,
      build,
    );
    return {
      pullRequest,
      commit: newest.commit,
      captures: captures.map((c) => c.id),
      undocumented: [...undocumented.values()].sort(byRoute),
      diffs: diffList,
      breaking: diffList.some((d) => d.breaking),
      againstProduction,
      consumers,
    };
  }
}
