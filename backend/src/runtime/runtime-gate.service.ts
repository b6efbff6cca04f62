import { Injectable } from '@nestjs/common';
import { type CiRuntimeResponse, DEFAULT_PRODUCTION_DAYS, type RuntimeCounts } from '@spectator/shared';
import { CapturesService } from '../captures/captures.service';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { FoldsBeforeRead } from '../common/folds-before-read';
import { CAPTURES_PER_COMMIT, PULL_REQUEST_PATTERN } from '../evidence/ci-gate.service';
import { pullRequestRowName } from '../evidence/environment-row';
import type { ProjectEntity } from '../projects/project.entity';
import { RuntimeRepository, type RuntimeTotalRow } from './runtime.repository';
import { RuntimeService } from './runtime.service';

const DAY_MS = 24 * 60 * 60_000;

const countsOf = (row: RuntimeTotalRow): RuntimeCounts => ({
  requests: Number(row.requests),
  serverErrors: Number(row.serverErrors),
  ttfb: row.ttfb,
  ttlb: row.ttlb,
});

/**
 * What `spectator-agent check --fail-on latency-regression,error-rate` judges: a pull request's
 * runtime counts beside production's for the same endpoint and version. The tests themselves run
 * in the agent (shared/src/runtime/regression.ts), where the thresholds are set.
 */
@Injectable()
export class RuntimeGateService {
  constructor(
    private readonly repository: RuntimeRepository,
    private readonly runtime: RuntimeService,
    private readonly captures: CapturesService,
    private readonly folds: FoldsBeforeRead,
  ) {}

  /**
   * The runtime gate's figures (`GET /ci/{pr}/runtime`): per documented endpoint the pull
   * request's CI runs called since its newest commit's first capture started (the minute of it, or
   * a later one when an older commit's runs reached into it: `CapturesService.ciCountsSince`),
   * those counts and production's at the same version over the last `productionDays` days.
   * @throws DomainError BadInput for a bad pull request, CaptureNotFound when it has no CI capture.
   */
  async againstProduction(
    project: ProjectEntity,
    pullRequest: string,
    productionDays = DEFAULT_PRODUCTION_DAYS,
    now = new Date(),
  ): Promise<CiRuntimeResponse> {
    if (!PULL_REQUEST_PATTERN.test(pullRequest))
      throw badInput('pr must be a pull request number or name (letters, digits, . _ -)');
    // Its batches are acknowledged at commit and folded after: the read waits for their folds.
    await this.folds.before(project, { kind: 'ci', pullRequest });
    const captures = await this.captures.ciCapturesOf(project, pullRequest, CAPTURES_PER_COMMIT);
    if (captures.length === 0)
      throw new DomainError(
        ErrorCode.CaptureNotFound,
        `pull request ${pullRequest} has no CI capture in project ${project.slug}`,
      );
    const since = await this.captures.ciCountsSince(project, pullRequest, captures);
    const productionSince = new Date(now.getTime() - productionDays * DAY_MS);
    const ci = await this.repository.totals(
      project.id,
      'ci',
      pullRequestRowName(pullRequest),
      since,
      this.runtime.resolutionSince(since, now),
      null,
    );
    const production =
      ci.length === 0
        ? []
        : await this.repository.totals(
            project.id,
            'production',
            null,
            productionSince,
            this.runtime.resolutionSince(productionSince, now),
            ci,
          );
    const key = (row: { method: string; path: string; version: string }): string =>
      `${row.method} ${row.path} ${row.version}`;
    const inProduction = new Map(production.map((row) => [key(row), row]));
    return {
      pullRequest,
      commit: captures[0]?.commit ?? null,
      since: since.toISOString(),
      productionSince: productionSince.toISOString(),
      endpoints: ci.map((row) => {
        const there = inProduction.get(key(row));
        return {
          endpointId: row.endpointId,
          method: row.method,
          path: row.path,
          version: row.version,
          pullRequest: countsOf(row),
          production: there === undefined ? null : countsOf(there),
        };
      }),
    };
  }
}
