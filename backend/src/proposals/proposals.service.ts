import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  byParameterName,
  type EndpointShapes,
  formatVersion,
  fromJsonSchema,
  isDocumentableHeader,
  type ParameterDoc,
  type ParametersDoc,
  type ProposalResponse,
} from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { ensureScope } from '../common/access';
import { actorKey, actorOf, type Principal } from '../common/principal';
import { toChangeResponse } from '../captures/captures.service';
import { CapturesService } from '../captures/captures.service';
import { fingerprintsOf, observedEndpointShapes } from '../captures/observed-shapes';
import { ShapeStore } from '../captures/shape-store';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import type { ProjectEntity } from '../projects/project.entity';
import { VersionStore } from '../versions/version-store';
import { notRemovable, planVersion, writeNextVersion } from '../versions/version-writer';
import { fourEyesNow } from '../projects/projects.service';
import { ProposalLifecycle } from './proposal-lifecycle';
import {
  type ProposalRow,
  type ProposalSummary,
  ProposalsRepository,
  type StoredEndpoint,
} from './proposals.repository';

export type { ProposalSummary } from './proposals.repository';
import type {
  CreateProposalDto,
  PlannedBodyDto,
  PlannedParameterDto,
  PlannedParametersDto,
  ProposalEndpointDto,
} from './dto/proposal.dto';

/** Reads a planned body's JSON Schema, naming the field when it is not one Spectator can read. */
function plannedShape(body: PlannedBodyDto, field: string): EndpointShapes['request'] {
  if (body.schema === undefined) return { contentType: body.contentType, shape: null };
  try {
    return { contentType: body.contentType, shape: fromJsonSchema(body.schema) };
  } catch (error) {
    throw badInput(`${field}.schema: ${(error as Error).message}`);
  }
}

/**
 * One planned parameter list, sorted by name; header names lower-cased.
 * @throws DomainError BadInput naming the entry that repeats a name or is a standard header.
 */
function plannedParameterList(
  list: readonly PlannedParameterDto[] | undefined,
  headers: boolean,
  field: string,
): ParameterDoc[] {
  const names = new Set<string>();
  return (list ?? [])
    .map((parameter, i) => {
      const name = headers ? parameter.name.toLowerCase() : parameter.name;
      if (names.has(name)) throw badInput(`${field}[${i}] repeats ${JSON.stringify(name)}`);
      if (headers && !isDocumentableHeader(name))
        throw badInput(`${field}[${i}]: ${name} is a standard header, not part of an API's documentation`);
      names.add(name);
      return { name, required: parameter.required };
    })
    .sort(byParameterName);
}

/** Planned parameters (design first); undefined when the endpoint's parameters are not documented. */
function plannedParameters(parameters: PlannedParametersDto | undefined, field: string): ParametersDoc | undefined {
  if (parameters === undefined) return undefined;
  return {
    query: plannedParameterList(parameters.query, false, `${field}.query`),
    headers: plannedParameterList(parameters.headers, true, `${field}.headers`),
  };
}

/** The planned shapes of one endpoint (design first). */
function plannedEndpointShapes(endpoint: ProposalEndpointDto, field: string): EndpointShapes {
  if (endpoint.responses === undefined || endpoint.responses.length === 0)
    throw badInput(`${field}.responses must list at least one response for a proposal without captureId`);
  const statuses = new Set<number>();
  const responses = endpoint.responses.map((response, i) => {
    if (statuses.has(response.status)) throw badInput(`${field}.responses[${i}] repeats status ${response.status}`);
    statuses.add(response.status);
    if (response.contentType === undefined) {
      if (response.schema !== undefined)
        throw badInput(`${field}.responses[${i}].contentType is required with a schema`);
      return { status: response.status, contentType: null, shape: null };
    }
    const body = plannedShape(
      { contentType: response.contentType, ...(response.schema === undefined ? {} : { schema: response.schema }) },
      `${field}.responses[${i}]`,
    );
    return { status: response.status, contentType: body?.contentType ?? null, shape: body?.shape ?? null };
  });
  const parameters = plannedParameters(endpoint.parameters, `${field}.parameters`);
  return {
    request: endpoint.request === undefined ? null : plannedShape(endpoint.request, `${field}.request`),
    responses: responses.sort((a, b) => a.status - b.status),
    ...(parameters === undefined ? {} : { parameters }),
  };
}

/**
 * Proposals, the API's pull requests: made from a capture's observed traffic or from planned
 * shapes, approved by an approver (a person, or a `write` token; with four eyes not its author), which makes the next versions, then moved through
 * Implemented → Appeared in Staging → Appeared in Production by evidence alone; every lifecycle
 * write is ProposalLifecycle's.
 */
@Injectable()
export class ProposalsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly proposals: ProposalsRepository,
    private readonly versions: VersionStore,
    private readonly captures: CapturesService,
    private readonly shapes: ShapeStore,
    private readonly lifecycle: ProposalLifecycle,
    private readonly audit: AuditService,
  ) {}

  /** Creates an open proposal. @throws DomainError BadInput naming the field, CaptureNotFound. */
  async create(project: ProjectEntity, principal: Principal, input: CreateProposalDto): Promise<ProposalResponse> {
    if (input.endpoints.some((e) => e.remove === true)) return this.createRemoval(project, principal, input);
    if (input.captureId !== undefined) {
      const index = input.endpoints.findIndex(
        (e) => e.request !== undefined || e.responses !== undefined || e.parameters !== undefined,
      );
      if (index >= 0)
        throw badInput(
          `endpoints[${index}]: request, responses and parameters are planned shapes, not allowed with captureId`,
        );
    }
    const capture = input.captureId === undefined ? null : await this.captures.byId(project, input.captureId);
    const seen = new Set<string>();
    const stored: StoredEndpoint[] = [];
    for (const [index, endpoint] of input.endpoints.entries()) {
      const field = `endpoints[${index}]`;
      const key = `${endpoint.method} ${endpoint.path}`;
      if (seen.has(key)) throw badInput(`${field} repeats ${key}`);
      seen.add(key);
      let shapes: EndpointShapes;
      if (capture === null) shapes = plannedEndpointShapes(endpoint, field);
      else {
        const { rows } = await this.captures
          .endpointRows(capture, endpoint.method, endpoint.path)
          .catch((error: unknown) => {
            throw error instanceof DomainError ? badInput(`${field}: ${error.message}`) : error;
          });
        shapes = observedEndpointShapes(rows, await this.shapes.load(fingerprintsOf(rows)));
      }
      stored.push({
        method: endpoint.method,
        path: endpoint.path,
        description: endpoint.description ?? null,
        mode: capture === null ? 'replace' : 'extend',
        ...shapes,
      });
    }
    const id = await this.db.transaction((manager) =>
      this.openIn(
        manager,
        project,
        principal,
        { title: input.title, description: input.description ?? '', sourceCaptureId: capture?.id ?? null },
        stored,
      ),
    );
    return this.get(project, id);
  }

  /**
   * Creates an open proposal that removes documented endpoints (every one with `remove`, none with
   * shapes, no capture). Approving it writes each one's next major version, marked removed.
   * @throws DomainError BadInput naming the endpoint (not documented, removed already, with shapes)
   */
  private async createRemoval(
    project: ProjectEntity,
    principal: Principal,
    input: CreateProposalDto,
  ): Promise<ProposalResponse> {
    if (input.captureId !== undefined)
      throw badInput('captureId: a removal proposal removes documented endpoints; it takes no capture');
    const current = new Map(
      (await this.versions.withCurrent(project.id, input.endpoints)).map((e) => [`${e.method} ${e.path}`, e.current]),
    );
    const seen = new Set<string>();
    const stored = input.endpoints.map((endpoint, index): StoredEndpoint => {
      const field = `endpoints[${index}]`;
      const key = `${endpoint.method} ${endpoint.path}`;
      if (endpoint.remove !== true)
        throw badInput(`${field}: a proposal removes endpoints or documents them, not both`);
      if (endpoint.request !== undefined || endpoint.responses !== undefined || endpoint.parameters !== undefined)
        throw badInput(`${field}: request, responses and parameters are not allowed with remove`);
      if (seen.has(key)) throw badInput(`${field} repeats ${key}`);
      seen.add(key);
      const refused = notRemovable(current.get(key) ?? null, key);
      if (refused !== null) throw badInput(`${field}: ${refused}`);
      return {
        method: endpoint.method,
        path: endpoint.path,
        description: null,
        mode: 'remove',
        request: null,
        responses: [],
      };
    });
    const id = await this.db.transaction((manager) =>
      this.openIn(
        manager,
        project,
        principal,
        { title: input.title, description: input.description ?? '', sourceCaptureId: null, removes: true },
        stored,
      ),
    );
    return this.get(project, id);
  }

  /**
   * Makes an Open proposal of some endpoints' shapes in the caller's transaction, with its
   * `proposal.created` audit entry (also a documentation commit that waits for a second person).
   * @returns its id
   */
  async openIn(
    manager: EntityManager,
    project: ProjectEntity,
    principal: Principal,
    meta: { title: string; description: string; sourceCaptureId: string | null; removes?: boolean },
    stored: readonly StoredEndpoint[],
  ): Promise<string> {
    const id = await this.lifecycle.open(manager, project, {
      ...meta,
      createdBy: principal.name,
      author: actorKey(actorOf(principal)),
    });
    await this.proposals.insertEndpoints(id, stored, manager);
    await this.audit.record(
      {
        projectId: project.id,
        actor: actorOf(principal),
        action: 'proposal.created',
        target: id,
        details: {
          title: meta.title,
          endpoints: stored.map((e) => `${e.method} ${e.path}`),
          ...(meta.removes === true ? { removes: true } : {}),
        },
      },
      manager,
    );
    return id;
  }

  /**
   * Refuses, before anything is made, a caller who would approve their own proposal: without the
   * approver role (a `write` token), or when the project requires four eyes (read now, not from a
   * cache). For an import with `?approve=true`.
   * @throws DomainError Forbidden naming why
   */
  async ensureMayApproveOwn(project: ProjectEntity, principal: Principal): Promise<void> {
    ensureScope(principal, 'approve');
    if (await fourEyesNow(this.db.manager, project.id))
      throw new DomainError(
        ErrorCode.Forbidden,
        `this project requires a second person to approve (four eyes): ${principal.name} cannot approve what they propose; propose without approving, and another approver approves`,
      );
  }

  /** Summaries of the proposals `ids` by id (those that exist; the versions they made name them). */
  async summaries(ids: readonly string[]): Promise<Map<string, ProposalSummary>> {
    if (ids.length === 0) return new Map();
    return new Map((await this.proposals.summaries([...new Set(ids)])).map((summary) => [summary.id, summary]));
  }

  /** Proposals newest first (at most `limit`). */
  async list(project: ProjectEntity, limit: number): Promise<ProposalResponse[]> {
    const rows = await this.proposals.page(project.id, limit);
    return Promise.all(rows.map((row) => this.describe(project, row)));
  }

  /** @throws DomainError ProposalNotFound */
  async get(project: ProjectEntity, id: string): Promise<ProposalResponse> {
    const row = await this.proposals.byId(project.id, id);
    if (!row)
      throw new DomainError(ErrorCode.ProposalNotFound, `proposal ${id} does not exist in project ${project.slug}`);
    return this.describe(project, row);
  }

  /**
   * Approves an open proposal in one transaction: the next version of each endpoint (in path,
   * method order, the lock order of every version writer), the Approved step with the approver,
   * then the evidence already there may move it further at once.
   * With four eyes (read now, in the transaction) its author may not.
   * @throws DomainError Conflict when it is already approved, ProposalNotFound, Forbidden (four eyes, role).
   */
  async approve(project: ProjectEntity, principal: Principal, id: string): Promise<ProposalResponse> {
    // The route checks it too; this covers every caller (an import that approves at once).
    ensureScope(principal, 'approve');
    await this.db.transaction(async (manager) => {
      const row = await this.proposals.byId(project.id, id, manager);
      if (!row)
        throw new DomainError(ErrorCode.ProposalNotFound, `proposal ${id} does not exist in project ${project.slug}`);
      if (row.status !== 'Open')
        throw new DomainError(ErrorCode.Conflict, `proposal ${id} is already approved (status ${row.status})`);
      const actor = actorOf(principal);
      if (row.author === actorKey(actor) && (await fourEyesNow(manager, project.id)))
        throw new DomainError(
          ErrorCode.Forbidden,
          `this project requires a second person to approve (four eyes): ${actor.name} made proposal ${id}`,
        );
      const endpoints = await this.proposals.endpointsInLockOrder(id, manager);
      const endpointIds: string[] = [];
      for (const endpoint of endpoints) {
        const written = await writeNextVersion(manager, {
          projectId: project.id,
          ...endpoint,
          shapes: endpoint,
          proposalId: id,
          keepUnchanged: false,
        });
        endpointIds.push(written.endpointId);
      }
      await this.lifecycle.approve(manager, id, actor);
      await this.audit.record(
        { projectId: project.id, actor, action: 'proposal.approved', target: id, details: { title: row.title } },
        manager,
      );
      await this.lifecycle.versionsMade(manager, project, id, endpointIds);
    });
    return this.get(project, id);
  }

  /** Status, steps and endpoints: the versions made (approved) or the versions it would make (open). */
  private async describe(project: ProjectEntity, row: ProposalRow): Promise<ProposalResponse> {
    const steps = await this.proposals.steps(row.id);
    const waiting = await this.lifecycle.removalWaits(
      project.id,
      row,
      steps.map((s) => s.step),
    );
    return {
      id: row.id,
      title: row.title,
      description: row.description,
      status: row.status,
      createdAt: row.createdAt.toISOString(),
      createdBy: row.createdBy,
      endpoints:
        row.status === 'Open' ? await this.plannedEndpoints(project, row.id) : await this.madeEndpoints(row.id),
      steps: steps.map((s) => ({
        step: s.step,
        actor: s.actor,
        at: s.at.toISOString(),
        pullRequest: s.pullRequest,
        build: s.build,
        commit: s.commit,
      })),
      ...(row.removes ? { removal: true } : {}),
      ...(waiting === undefined ? {} : { waiting }),
    };
  }

  private async madeEndpoints(proposalId: string): Promise<ProposalResponse['endpoints']> {
    const made = await this.versions.madeBy(proposalId);
    return made.map((m) => ({
      endpointId: m.endpointId,
      method: m.method,
      path: m.path,
      fromVersion:
        m.fromMajor === null || m.fromMinor === null ? null : formatVersion({ major: m.fromMajor, minor: m.fromMinor }),
      toVersion: formatVersion(m),
      changes: m.changes.map(toChangeResponse),
    }));
  }

  /** The versions an open proposal would make now, from the current versions of its endpoints. */
  private async plannedEndpoints(project: ProjectEntity, proposalId: string): Promise<ProposalResponse['endpoints']> {
    const planned = await this.proposals.endpoints(proposalId);
    const existing = new Map(
      (await this.versions.withCurrent(project.id, planned)).map((e) => [`${e.method} ${e.path}`, e]),
    );
    return planned.map((p) => {
      const endpoint = existing.get(`${p.method} ${p.path}`);
      const current = endpoint?.current ?? null;
      const plan = planVersion(current, p, p.mode);
      return {
        endpointId: endpoint?.endpointId ?? null,
        method: p.method,
        path: p.path,
        fromVersion: current && formatVersion(current),
        toVersion: formatVersion(plan.version),
        changes: plan.changes.map(toChangeResponse),
      };
    });
  }
}
