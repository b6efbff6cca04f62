import { Injectable } from '@nestjs/common';
import {
  type AgentEnvironment,
  type DiffOrigins,
  type DiffOriginsResponse,
  type DriftOrigin,
  driftSinceText,
  MATRIX_KINDS,
  type MatrixKind,
} from '@spectator/shared';
import { CapturesService, type ExchangeKey, offendingExchangesOf } from '../captures/captures.service';
import type { ProjectEntity } from '../projects/project.entity';
import type { EndpointKey } from '../views/view-cache';
import { environmentRowOf } from './environment-row';
import { EvidenceRepository, type WantedExchange } from './evidence.repository';

/** A diff's endpoint and the exchanges it was made of, whose origins are asked for. */
export interface DiffTraffic {
  method: string;
  path: string;
  exchanges: readonly ExchangeKey[];
}

/**
 * Where the traffic of a diff was first seen (issue 18): for a capture's diffs and a pull
 * request's CI summary, the first pull request, staging build and production build whose evidence
 * has one of the exchanges that make the diff (its rows that do not conform to the documented
 * version), each the row of its kind with the earliest first evidence. Read when asked, from
 * evidence (one statement per page of diffs): capture diffs are kept as JSON views, and a diff's
 * origins change as other rows show the same traffic. Unlike a drifting cell's origins
 * (drift/drift.service.ts) this covers every diff, also traffic an older version documents.
 */
@Injectable()
export class DiffOriginsService {
  constructor(
    private readonly captures: CapturesService,
    private readonly repository: EvidenceRepository,
  ) {}

  /** `GET /captures/{id}/diffs/origins`: one page of a capture's diffs (the diffs' paging), each with its origins. */
  async ofCapture(
    project: ProjectEntity,
    captureId: string,
    after: EndpointKey | undefined,
    limit: number,
  ): Promise<DiffOriginsResponse[]> {
    const capture = await this.captures.byId(project, captureId);
    const diffs = await this.captures.diffsPage(project, capture.id, after, limit);
    const environment: AgentEnvironment = {
      kind: capture.environmentKind,
      ...(capture.pullRequest === null ? {} : { pullRequest: capture.pullRequest }),
      ...(capture.build === null ? {} : { build: capture.build }),
      ...(capture.commit === null ? {} : { commit: capture.commit }),
    };
    const origins = await this.originsOf(
      project,
      diffs.map((diff) => ({ method: diff.method, path: diff.path, exchanges: offendingExchangesOf(diff) })),
      environmentRowOf(environment),
    );
    return diffs.map((diff, index) => ({
      endpointId: diff.endpointId,
      method: diff.method,
      path: diff.path,
      ...(origins[index] as DiffOrigins),
    }));
  }

  /**
   * The origins of each diff (in their order), in words as seen from `own`, the row the diffs
   * were seen in (null: a local capture, in no row).
   */
  async originsOf(
    project: ProjectEntity,
    diffs: readonly DiffTraffic[],
    own: { kind: MatrixKind; name: string } | null,
  ): Promise<DiffOrigins[]> {
    const wanted: WantedExchange[] = diffs.flatMap((diff, n) =>
      diff.exchanges.map((exchange) => ({
        n,
        method: diff.method,
        path: diff.path,
        status: exchange.status,
        req_ct: exchange.requestContentType,
        req_fp: exchange.requestShape,
        res_ct: exchange.responseContentType,
        res_fp: exchange.responseShape,
      })),
    );
    const found = await this.repository.firstRowsShowing(project.id, wanted);
    const byDiff = diffs.map((): DriftOrigin[] => []);
    for (const row of found)
      byDiff[row.n]?.push({
        kind: row.kind,
        name: row.name,
        pullRequest: row.pullRequest,
        build: row.build,
        commit: row.commit,
        seenAt: new Date(row.firstSeen).toISOString(),
      });
    return byDiff.map((origins) => {
      origins.sort((a, b) => MATRIX_KINDS.indexOf(a.kind) - MATRIX_KINDS.indexOf(b.kind));
      return { origins, since: driftSinceText(origins, own) };
    });
  }
}
