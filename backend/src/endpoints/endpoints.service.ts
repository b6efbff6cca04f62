import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type BodyDocResponse,
  type DocumentationResponse,
  type EndpointResponse,
  type EndpointShapes,
  formatVersion,
  type ParametersDoc,
  type ResponseDocResponse,
  toJsonSchema,
  type Version,
} from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../auth/tokens.service';
import { AuditService } from '../audit/audit.service';
import { actorOf } from '../common/principal';
import { CapturesService, toChangeResponse } from '../captures/captures.service';
import { PathHintsService } from '../paths/path-hints.service';
import { fingerprintsOf, observedEndpointShapes } from '../captures/observed-shapes';
import { ShapeStore } from '../captures/shape-store';
import { DomainError, ErrorCode } from '../common/errors';
import { EventsService } from '../events/events.service';
import type { ProjectEntity } from '../projects/project.entity';
import { ProposalLifecycle } from '../proposals/proposal-lifecycle';
import { type StoredEndpoint } from '../proposals/proposals.repository';
import { type ProposalSummary, ProposalsService } from '../proposals/proposals.service';
import { fourEyesNow } from '../projects/projects.service';
import type { DocumentationDto } from './dto/documentation.dto';
import { type EndpointAtVersion, EndpointsRepository } from './endpoints.repository';
import { planNextVersion, type VersionInput, writeNextVersion } from '../versions/version-writer';
import { withoutBodies } from '../versions/endpoint-shapes';

/** A version history entry of one endpoint, with the proposal behind it. */
export interface EndpointVersionResponse {
  id: string;
  version: string;
  description: string;
  createdAt: string;
  request: BodyDocResponse | null;
  responses: ResponseDocResponse[];
  parameters: ParametersDoc | null;
  changes: ReturnType<typeof toChangeResponse>[];
  /** True for a version made by a removal proposal: the endpoint is gone from it on. */
  removed?: boolean;
  proposal: {
    id: string;
    title: string;
    status: string;
    createdBy: string | null;
    approvedBy: string | null;
    approvedAt: string | null;
  } | null;
}

/** The proposal behind a version, as its history shows it (`summary` missing: none is stored). */
function toProposalOfVersion(id: string, summary: ProposalSummary | undefined): EndpointVersionResponse['proposal'] {
  return {
    id,
    title: summary?.title ?? '',
    status: summary?.status ?? 'Approved',
    createdBy: summary?.createdBy ?? null,
    approvedBy: summary?.approvedBy ?? null,
    approvedAt: summary?.approvedAt?.toISOString() ?? null,
  };
}

/** Documentation as the API writes it: shapes as JSON Schema, parameters null when not documented. */
export function toEndpointDocs(shapes: EndpointShapes): {
  request: BodyDocResponse | null;
  responses: ResponseDocResponse[];
  parameters: ParametersDoc | null;
} {
  return {
    request: shapes.request && {
      contentType: shapes.request.contentType,
      shape: shapes.request.shape && toJsonSchema(shapes.request.shape),
    },
    responses: shapes.responses.map((r) => ({
      status: r.status,
      contentType: r.contentType ?? '',
      shape: r.shape && toJsonSchema(r.shape),
    })),
    parameters: shapes.parameters ?? null,
  };
}

/** The title of a documentation commit's proposal: its message, else the endpoints it documents. */
function commitTitle(message: string | undefined, endpoints: ReadonlyArray<{ method: string; path: string }>): string {
  return message ?? `Document ${endpoints.map((e) => `${e.method} ${e.path}`).join(', ')}`.slice(0, 500);
}

/** An endpoint of a documentation commit, as its version is written or planned: its shapes extend what is documented. */
function versionInput(
  project: ProjectEntity,
  endpoint: { method: string; path: string; description: string | undefined; shapes: EndpointShapes },
): Omit<VersionInput, 'proposalId' | 'keepUnchanged'> {
  return {
    projectId: project.id,
    method: endpoint.method,
    path: endpoint.path,
    description: endpoint.description ?? null,
    shapes: endpoint.shapes,
    mode: 'extend',
  };
}

@Injectable()
export class EndpointsService {
  constructor(
    private readonly endpoints: EndpointsRepository,
    @InjectDataSource() private readonly db: DataSource,
    private readonly captures: CapturesService,
    private readonly shapes: ShapeStore,
    private readonly events: EventsService,
    private readonly lifecycle: ProposalLifecycle,
    private readonly proposals: ProposalsService,
    private readonly hints: PathHintsService,
    private readonly audit: AuditService,
  ) {}

  /** Documented endpoints with their current version and shapes. */
  async list(project: ProjectEntity): Promise<EndpointResponse[]> {
    const rows = await this.endpoints.current(project.id);
    return rows.map((row) => ({
      id: row.id,
      method: row.method,
      path: row.path,
      description: row.description,
      version: formatVersion(row),
      ...toEndpointDocs(row),
      updatedAt: row.updatedAt.toISOString(),
    }));
  }

  /**
   * Path templates sent to agents, matched first: those of documented endpoints, then those users
   * stated (path hints). The agent takes the most specific match and, on a tie, the first listed,
   * so a documented template wins over a hint.
   */
  async templates(projectId: string): Promise<string[]> {
    const documented = await this.endpoints.documentedPaths(projectId);
    const hinted = (await this.hints.templates(projectId)).filter((template) => !documented.includes(template));
    return [...documented, ...hinted];
  }

  /**
   * Endpoints at one version each, by path then method: the project's endpoints that have version
   * `version`, the endpoints of the versions `versionIds`, or the documented ones at their current version.
   */
  atVersions(
    projectId: string,
    at: { version: Version } | { versionIds: readonly string[] } | 'current',
  ): Promise<EndpointAtVersion[]> {
    if (at === 'current') return this.endpoints.atCurrentVersion(projectId);
    if ('version' in at) return this.endpoints.atVersion(projectId, at.version);
    return this.endpoints.atVersionIds(at.versionIds);
  }

  /** The version history of an endpoint, newest first. */
  async versions(project: ProjectEntity, endpointId: string): Promise<EndpointVersionResponse[]> {
    if (!(await this.endpoints.exists(project.id, endpointId))) {
      throw new DomainError(
        ErrorCode.EndpointNotFound,
        `endpoint ${endpointId} does not exist in project ${project.slug}`,
      );
    }
    const rows = await this.endpoints.versions(endpointId);
    const proposals = await this.proposals.summaries(
      rows.flatMap((row) => (row.proposalId === null ? [] : [row.proposalId])),
    );
    return rows.map((row) => ({
      id: row.id,
      version: formatVersion(row),
      description: row.description,
      createdAt: row.createdAt.toISOString(),
      ...toEndpointDocs(row),
      changes: row.changes.map(toChangeResponse),
      ...(row.removed ? { removed: true } : {}),
      proposal: row.proposalId === null ? null : toProposalOfVersion(row.proposalId, proposals.get(row.proposalId)),
    }));
  }

  /**
   * Commits documentation from a capture's observed traffic: a proposal made and approved in one
   * step by the committer (under four eyes an Open proposal instead, see `proposeHeld`), and a version per endpoint whose documentation changes
   * (1.0 for a new endpoint, next minor or major from the changes for a documented one). With
   * `documentBodies`, the query parameter and documentable request header names seen are
   * documented too (new ones as optional); without, the endpoint's parameters stay as they are.
   */
  async commit(project: ProjectEntity, principal: Principal, input: DocumentationDto): Promise<DocumentationResponse> {
    const capture = await this.captures.byId(project, input.captureId);
    const seen = new Set<string>();
    const observed: Array<{ method: string; path: string; description: string | undefined; shapes: EndpointShapes }> =
      [];
    for (const [index, endpoint] of input.endpoints.entries()) {
      const key = `${endpoint.method} ${endpoint.path}`;
      if (seen.has(key)) throw new DomainError(ErrorCode.BadInput, `endpoints[${index}] repeats ${key}`);
      seen.add(key);
      const { rows } = await this.captures
        .endpointRows(capture, endpoint.method, endpoint.path)
        .catch((error: unknown) => {
          throw error instanceof DomainError
            ? new DomainError(error.code, `endpoints[${index}]: ${error.message}`)
            : error;
        });
      const shapes = observedEndpointShapes(rows, await this.shapes.load(fingerprintsOf(rows)));
      observed.push({
        method: endpoint.method,
        path: endpoint.path,
        description: endpoint.description,
        shapes: endpoint.documentBodies ? shapes : withoutBodies(shapes),
      });
    }
    // Lock endpoints in one order so concurrent commits cannot deadlock.
    observed.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));

    const result = await this.db.transaction(async (manager): Promise<DocumentationResponse> => {
      // Four eyes (read now): the one who commits cannot approve, so the commit is a proposal for another approver.
      if (await fourEyesNow(manager, project.id))
        return this.proposeHeld(manager, project, principal, capture.id, input.message, observed);
      let proposalId: string | null = null;
      // Made on the first endpoint whose documentation changes; none when nothing changes.
      const proposal = async (): Promise<string> => {
        proposalId ??= await this.approvedProposal(manager, project, principal, capture.id, input.message, observed);
        return proposalId;
      };
      const versions: DocumentationResponse['versions'] = [];
      const made: string[] = [];
      for (const endpoint of observed) {
        const written = await writeNextVersion(manager, {
          ...versionInput(project, endpoint),
          proposalId: proposal,
          keepUnchanged: true,
        });
        if (written.made) made.push(written.endpointId);
        versions.push({
          endpointId: written.endpointId,
          method: endpoint.method,
          path: endpoint.path,
          version: formatVersion(written.version),
          previous: written.previous && formatVersion(written.previous),
        });
      }
      // New versions can change matrix cells and move proposals (evidence may already be there).
      await this.lifecycle.versionsMade(manager, project, proposalId, made);
      if (proposalId !== null)
        await this.audit.record(
          {
            projectId: project.id,
            actor: actorOf(principal),
            action: 'documentation.committed',
            target: proposalId,
            details: {
              captureId: capture.id,
              versions: versions
                .filter((v) => v.version !== v.previous)
                .map((v) => `${v.method} ${v.path} ${v.version}`),
            },
          },
          manager,
        );
      return { proposalId, versions };
    });
    if (result.awaitingApproval) return result;
    await this.events.publish(project.id, {
      type: 'documentation.committed',
      endpointIds: result.versions.flatMap((v) => (v.endpointId === null ? [] : [v.endpointId])),
    });
    return result;
  }

  /**
   * A documentation commit under four eyes: an Open proposal of the endpoints whose documentation
   * would change (none: no proposal), for another approver to approve; nothing is written yet.
   */
  private async proposeHeld(
    manager: EntityManager,
    project: ProjectEntity,
    principal: Principal,
    captureId: string,
    message: string | undefined,
    observed: ReadonlyArray<{ method: string; path: string; description: string | undefined; shapes: EndpointShapes }>,
  ): Promise<DocumentationResponse> {
    const versions: DocumentationResponse['versions'] = [];
    const proposed: StoredEndpoint[] = [];
    for (const endpoint of observed) {
      const plan = await planNextVersion(manager, versionInput(project, endpoint));
      versions.push({
        endpointId: plan.endpointId,
        method: endpoint.method,
        path: endpoint.path,
        version: formatVersion(plan.version),
        previous: plan.previous && formatVersion(plan.previous),
      });
      if (plan.changesAnything)
        proposed.push({
          method: endpoint.method,
          path: endpoint.path,
          description: endpoint.description ?? null,
          mode: 'extend',
          ...endpoint.shapes,
        });
    }
    if (proposed.length === 0) return { proposalId: null, awaitingApproval: true, versions };
    const proposalId = await this.proposals.openIn(
      manager,
      project,
      principal,
      { title: commitTitle(message, proposed), description: message ?? '', sourceCaptureId: captureId },
      proposed,
    );
    return { proposalId, awaitingApproval: true, versions };
  }

  private async approvedProposal(
    manager: EntityManager,
    project: ProjectEntity,
    principal: Principal,
    captureId: string,
    message: string | undefined,
    endpoints: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<string> {
    return this.lifecycle.openApproved(
      manager,
      project,
      {
        title: commitTitle(message, endpoints),
        description: message ?? '',
        sourceCaptureId: captureId,
        createdBy: principal.name,
        author: null,
      },
      principal.name,
      new Date(),
    );
  }
}
