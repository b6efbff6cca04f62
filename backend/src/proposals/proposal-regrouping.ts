import { Injectable } from '@nestjs/common';
import type { EndpointShapes } from '@spectator/shared';
import { AuditService } from '../audit/audit.service';
import type { Queryable } from '../common/queryable';
import { mergeObservedEndpointShapes } from '../versions/endpoint-shapes';
import { type ProposalEndpointRow, ProposalsRepository } from './proposals.repository';

/**
 * Open proposals made from traffic, as regrouping (paths/regroup.service.ts) moves what was stored
 * under literal paths into their template, in its transaction: their endpoints are keyed on the
 * paths traffic came under, so they follow it. Planned endpoints keep the paths users wrote.
 */
@Injectable()
export class ProposalRegrouping {
  constructor(
    private readonly proposals: ProposalsRepository,
    private readonly audit: AuditService,
  ) {}

  /**
   * The paths `pattern` (a LIKE pattern) matches, other than `except`, of the endpoints of open
   * proposals made from traffic of capture `captureId` (any when null), each once, in no order.
   */
  pathsLike(
    manager: Queryable,
    projectId: string,
    captureId: string | null,
    pattern: string,
    except: string,
  ): Promise<string[]> {
    return this.proposals.pathsLike(projectId, captureId, pattern, except, manager);
  }

  /**
   * Rewrites the endpoints of open proposals made from traffic of capture `captureId` (any when
   * null) under `literals` to `template`: per proposal and method, the literal copies (and an
   * endpoint already at the template) become one endpoint at the first one's position, their
   * observed shapes merged with their instance counts (`mergeObservedEndpointShapes`), so approving it
   * documents the template with everything the copies showed. The proposal's `proposal.created`
   * audit entry names the template instead of the literal paths (no name stays stored).
   * @returns how many literal endpoints were rewritten.
   */
  async regroup(
    manager: Queryable,
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    template: string,
  ): Promise<number> {
    const rows = await this.proposals.openEndpointsUnder(projectId, captureId, literals, template, manager);
    const groups = new Map<string, ProposalEndpointRow[]>();
    for (const row of rows) {
      const key = `${row.proposalId} ${row.method}`;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    let rewritten = 0;
    const proposals = new Set<string>();
    for (const group of groups.values()) {
      const copies = group.filter((row) => row.path !== template);
      if (copies.length === 0) continue;
      rewritten += copies.length;
      proposals.add(group[0]!.proposalId);
      const [kept, ...others] = group as [ProposalEndpointRow, ...ProposalEndpointRow[]];
      const shapes = others.reduce<EndpointShapes>(
        (merged, row) => mergeObservedEndpointShapes(merged, shapesOf(row)),
        shapesOf(kept),
      );
      if (others.length > 0)
        await this.proposals.deleteEndpoints(
          others.map((row) => row.id),
          manager,
        );
      await this.proposals.rewriteEndpoint(
        kept.id,
        template,
        group.find((row) => row.description !== null)?.description ?? null,
        shapes,
        manager,
      );
    }
    if (proposals.size > 0)
      await this.audit.renamePaths(manager, projectId, 'proposal.created', [...proposals], literals, template);
    return rewritten;
  }
}

/** The shapes of a proposal endpoint row (parameters only when it has some). */
function shapesOf(row: ProposalEndpointRow): EndpointShapes {
  return {
    request: row.request,
    responses: row.responses,
    ...(row.parameters === null || row.parameters === undefined ? {} : { parameters: row.parameters }),
  };
}
