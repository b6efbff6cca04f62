import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type EndpointShapes,
  OPEN_STATUS,
  PROPOSAL_STATUSES,
  PROPOSAL_STEPS,
  type ProposalStatus,
  type ProposalStepName,
} from '@spectator/shared';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';
import { returningRows } from '../common/returning';
import { sqlRank } from '../common/sql';
import type { ProposalMode } from '../versions/version-writer';

/** Lifecycle order of `proposals.status`, for "status = furthest step reached". */
const STATUS_RANK_SQL = sqlRank('status', PROPOSAL_STATUSES);

/** Lifecycle order of `proposal_steps.step`. */
const STEP_ORDER_SQL = sqlRank('step', PROPOSAL_STEPS);

/**
 * Endpoints of open proposals made from traffic (`extend`) of the capture `$3` (of any capture
 * when null), with `$2` the open status and `$4` the mode: keyed on the paths traffic came under,
 * so they follow a regrouping. Planned endpoints (`replace`) keep the paths users wrote.
 */
const OPEN_FROM_TRAFFIC = `p.status = $2 AND pe.mode = $4 AND ($3::uuid IS NULL OR p.source_capture_id = $3)`;

/** The mode of the endpoints proposed from traffic (as opposed to `replace`, planned ones). */
const FROM_TRAFFIC: ProposalMode = 'extend';

/** The mode of the endpoints a removal proposal removes. */
const REMOVE: ProposalMode = 'remove';

/** One endpoint of an open proposal made from traffic, as regrouping reads it. */
export interface ProposalEndpointRow extends Omit<EndpointShapes, 'parameters'> {
  id: string;
  parameters: EndpointShapes['parameters'] | null;
  proposalId: string;
  method: string;
  path: string;
  description: string | null;
}

/** A proposal as listed. */
export interface ProposalRow {
  id: string;
  title: string;
  description: string;
  status: ProposalStatus;
  createdAt: Date;
  createdBy: string | null;
  /** `person:<id>` or `token:<id>` of who made it (four eyes); null before roles existed. */
  author: string | null;
  /** It removes its endpoints (mode `remove`). */
  removes: boolean;
  /** When it was approved; null while it is Open. */
  approvedAt: Date | null;
}

/** The columns of `ProposalRow`. */
const ROW_COLUMNS = `id, title, description, status, created_at AS "createdAt", created_by AS "createdBy", author, removes, approved_at AS "approvedAt"`;

/** An approved removal proposal waiting for an evidence step, with the endpoints it removes. */
export interface AwaitedRemoval {
  id: string;
  endpoints: Array<{ method: string; path: string }>;
}

/** Who made and approved a proposal, and where it is in its lifecycle. */
export interface ProposalSummary {
  id: string;
  title: string;
  status: ProposalStatus;
  createdBy: string | null;
  approvedBy: string | null;
  approvedAt: Date | null;
}

/** What a new proposal records. */
export interface NewProposal {
  title: string;
  description: string;
  sourceCaptureId: string | null;
  /** The name shown as its maker (`created_by`). */
  createdBy: string;
  /** `actorKey` of its maker (four eyes); null when none is recorded. */
  author: string | null;
  /** It removes its endpoints (each in mode `remove`). */
  removes?: boolean;
}

/** A proposed endpoint change, as stored until approval (`proposal_endpoints`). */
export interface StoredEndpoint extends EndpointShapes {
  method: string;
  path: string;
  description: string | null;
  mode: ProposalMode;
}

/** Where evidence of a step came from (all null for a step a person took). */
export interface StepEvidence {
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
}

/** A recorded lifecycle step. */
export interface StepRow extends StepEvidence {
  step: ProposalStepName;
  actor: string | null;
  at: Date;
}

/**
 * The SQL of proposals, their lifecycle steps and their planned endpoints (`proposals`,
 * `proposal_steps`, `proposal_endpoints`), raw SQL in one style. Writes take the caller's
 * transaction (`manager`); the status and step writes are ProposalLifecycle's alone. Statuses and
 * steps are bound parameters typed by the shared lifecycle, never literals in the SQL.
 */
@Injectable()
export class ProposalsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Inserts a proposal with status `status`; `approval` records who approved it and when (null
   * while it is Open). @returns its id.
   */
  async insert(
    projectId: string,
    proposal: NewProposal,
    status: ProposalStatus,
    approval: { by: string; at: Date } | null,
    manager: Queryable,
  ): Promise<string> {
    const [row] = (await manager.query(
      `INSERT INTO proposals (project_id, title, description, status, source_capture_id, created_by, author, approved_by, approved_at, removes)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
      [
        projectId,
        proposal.title,
        proposal.description,
        status,
        proposal.sourceCaptureId,
        proposal.createdBy,
        proposal.author,
        approval?.by ?? null,
        approval?.at ?? null,
        proposal.removes === true,
      ],
    )) as Array<{ id: string }>;
    if (!row) throw new Error('proposal insert returned nothing');
    return row.id;
  }

  /**
   * Moves a proposal from status `from` to `to`, approved by `approvedBy` now (the transaction's
   * time). @returns false when its status was not `from`.
   */
  async approve(
    id: string,
    from: ProposalStatus,
    to: ProposalStatus,
    approvedBy: string,
    manager: Queryable,
  ): Promise<boolean> {
    const approved = await returningRows(
      manager,
      `UPDATE proposals SET status = $3, approved_by = $2, approved_at = now() WHERE id = $1 AND status = $4 RETURNING id`,
      [id, approvedBy, to, from],
    );
    return approved.length > 0;
  }

  /**
   * Inserts a step a person took, at `at` (null: now, the transaction's time). Fails on the
   * `proposal_steps_once` constraint when the proposal has that step already.
   */
  async insertStep(
    proposalId: string,
    step: ProposalStepName,
    actor: string,
    at: Date | null,
    manager: Queryable,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO proposal_steps (project_id, proposal_id, step, actor, at)
       SELECT project_id, id, $2, $3, COALESCE($4::timestamptz, now()) FROM proposals WHERE id = $1`,
      [proposalId, step, actor, at],
    );
  }

  /**
   * Inserts a step evidence showed, now, unless the proposal has it already.
   * @returns when it was recorded, or null when it was there before.
   */
  async insertEvidenceStep(
    proposalId: string,
    step: ProposalStepName,
    evidence: StepEvidence,
    manager: Queryable,
  ): Promise<Date | null> {
    const [recorded] = (await manager.query(
      `INSERT INTO proposal_steps (project_id, proposal_id, step, at, pull_request, build, commit)
       SELECT project_id, id, $2, now(), $3, $4, $5 FROM proposals WHERE id = $1
       ON CONFLICT ON CONSTRAINT proposal_steps_once DO NOTHING
       RETURNING at`,
      [proposalId, step, evidence.pullRequest, evidence.build, evidence.commit],
    )) as Array<{ at: Date }>;
    return recorded?.at ?? null;
  }

  /**
   * Raises a proposal's status to `step` when that is further in the lifecycle than its status
   * (never back). @returns its title and status after, or null when there is no such proposal.
   */
  async advanceStatus(
    proposalId: string,
    step: ProposalStepName,
    manager: Queryable,
  ): Promise<{ title: string; status: ProposalStepName } | null> {
    const [proposal] = await returningRows<{ title: string; status: ProposalStepName }>(
      manager,
      `UPDATE proposals SET status = CASE WHEN ${STATUS_RANK_SQL} < $2 THEN $3 ELSE status END WHERE id = $1 RETURNING title, status`,
      [proposalId, PROPOSAL_STATUSES.indexOf(step), step],
    );
    return proposal ?? null;
  }

  /**
   * Those of the proposals `proposalIds` of project `projectId` past status `pastStatus` that have
   * no step `step` yet: the ones a change of the matrix cells may move to that step (removals are
   * moved by `removalsAwaiting`'s rule instead). In the caller's transaction.
   */
  async awaitingStep(
    projectId: string,
    proposalIds: readonly string[],
    step: ProposalStepName,
    pastStatus: ProposalStatus,
    manager: Queryable,
  ): Promise<string[]> {
    const rows = (await manager.query(
      `SELECT p.id FROM proposals p
        WHERE p.id = ANY($2::uuid[]) AND p.project_id = $1 AND p.status <> $4 AND NOT p.removes
          AND NOT EXISTS (SELECT 1 FROM proposal_steps s WHERE s.proposal_id = p.id AND s.step = $3)`,
      [projectId, proposalIds, step, pastStatus],
    )) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  /**
   * The removal proposals of project `projectId` past status `pastStatus`, approved before `before`,
   * that have no step `step` yet, each with the endpoints it removes, in id order: those a fold of
   * a row first seen at `before` may move to `step`. Run on every fold: where the project removes
   * nothing it is one probe of an empty partial index (`proposals_removing_idx`).
   */
  removalsAwaiting(
    projectId: string,
    step: ProposalStepName,
    before: Date,
    pastStatus: ProposalStatus,
    manager: Queryable,
  ): Promise<AwaitedRemoval[]> {
    return manager.query(
      `SELECT p.id, jsonb_agg(jsonb_build_object('method', pe.method, 'path', pe.path) ORDER BY pe.position) AS endpoints
         FROM proposals p JOIN proposal_endpoints pe ON pe.proposal_id = p.id AND pe.mode = $5
        WHERE p.project_id = $1 AND p.removes AND p.status <> $2 AND p.approved_at < $3
          AND NOT EXISTS (SELECT 1 FROM proposal_steps s WHERE s.proposal_id = p.id AND s.step = $4)
        GROUP BY p.id ORDER BY p.id`,
      [projectId, pastStatus, before, step, REMOVE],
    );
  }

  /** The endpoints proposal `proposalId` removes, in the order given. */
  removedEndpoints(proposalId: string): Promise<Array<{ method: string; path: string }>> {
    return this.db.query(
      'SELECT method, path FROM proposal_endpoints WHERE proposal_id = $1 AND mode = $2 ORDER BY position',
      [proposalId, REMOVE],
    );
  }

  /** A proposal's title and status with its step `step` (its actor and time), or null when it has none. */
  async withStep(
    proposalId: string,
    step: ProposalStepName,
    manager: Queryable,
  ): Promise<{ title: string; status: ProposalStepName; actor: string | null; at: Date } | null> {
    const [row] = (await manager.query(
      `SELECT p.title, p.status, s.actor, s.at FROM proposals p JOIN proposal_steps s ON s.proposal_id = p.id AND s.step = $2 WHERE p.id = $1`,
      [proposalId, step],
    )) as Array<{ title: string; status: ProposalStepName; actor: string | null; at: Date }>;
    return row ?? null;
  }

  /** Stores a proposal's planned endpoints, their positions in the order given. */
  async insertEndpoints(proposalId: string, endpoints: readonly StoredEndpoint[], manager: Queryable): Promise<void> {
    await manager.query(
      `INSERT INTO proposal_endpoints (project_id, proposal_id, position, method, path, description, mode, request, responses, parameters)
       SELECT p.project_id, p.id, x.position, x.method, x.path, x.description, x.mode, x.request, x.responses, x.parameters
         FROM proposals p,
              jsonb_to_recordset($2::jsonb) AS x(position integer, method text, path text, description text, mode text, request jsonb, responses jsonb, parameters jsonb)
        WHERE p.id = $1::uuid`,
      [proposalId, JSON.stringify(endpoints.map((e, position) => ({ position, ...e })))],
    );
  }

  /** A proposal's planned endpoints in the order they were given. */
  endpoints(proposalId: string): Promise<StoredEndpoint[]> {
    return this.db.query(
      'SELECT method, path, description, mode, request, responses, parameters FROM proposal_endpoints WHERE proposal_id = $1 ORDER BY position',
      [proposalId],
    );
  }

  /** A proposal's planned endpoints in path, method order (the lock order of every version writer). */
  endpointsInLockOrder(proposalId: string, manager: Queryable): Promise<StoredEndpoint[]> {
    return manager.query(
      'SELECT method, path, description, mode, request, responses, parameters FROM proposal_endpoints WHERE proposal_id = $1 ORDER BY path, method',
      [proposalId],
    );
  }

  /** A project's proposals, newest first (at most `limit`). */
  page(projectId: string, limit: number): Promise<ProposalRow[]> {
    return this.db.query(
      `SELECT ${ROW_COLUMNS} FROM proposals
        WHERE project_id = $1
        ORDER BY created_at DESC, id DESC LIMIT $2`,
      [projectId, limit],
    );
  }

  /** A project's proposal, or null; in `manager`'s transaction when given. */
  async byId(projectId: string, id: string, manager?: Queryable): Promise<ProposalRow | null> {
    const [row] = (await (manager ?? this.db).query(
      `SELECT ${ROW_COLUMNS} FROM proposals
        WHERE project_id = $1 AND id = $2`,
      [projectId, id],
    )) as ProposalRow[];
    return row ?? null;
  }

  /** The summaries of the proposals `ids` (those that exist), unsorted. */
  summaries(ids: readonly string[]): Promise<ProposalSummary[]> {
    return this.db.query(
      `SELECT id, title, status, created_by AS "createdBy", approved_by AS "approvedBy", approved_at AS "approvedAt"
         FROM proposals WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  }

  /** A proposal's steps in lifecycle order. */
  steps(proposalId: string): Promise<StepRow[]> {
    return this.db.query(
      `SELECT step, actor, at, pull_request AS "pullRequest", build, commit FROM proposal_steps WHERE proposal_id = $1
        ORDER BY ${STEP_ORDER_SQL}`,
      [proposalId],
    );
  }

  // ---- regrouping (paths/regroup.service.ts), in its transaction

  /**
   * The paths `pattern` (a LIKE pattern) matches, other than `except`, of the endpoints of open
   * proposals made from traffic of capture `captureId` (any when null), each once.
   */
  async pathsLike(
    projectId: string,
    captureId: string | null,
    pattern: string,
    except: string,
    manager: Queryable,
  ): Promise<string[]> {
    const rows = (await manager.query(
      `SELECT DISTINCT pe.path FROM proposal_endpoints pe JOIN proposals p ON p.id = pe.proposal_id
        WHERE p.project_id = $1 AND ${OPEN_FROM_TRAFFIC} AND pe.path LIKE $5 AND pe.path <> $6`,
      [projectId, OPEN_STATUS, captureId, FROM_TRAFFIC, pattern, except],
    )) as Array<{ path: string }>;
    return rows.map((row) => row.path);
  }

  /**
   * The endpoints of open proposals made from traffic of capture `captureId` (any when null) under
   * `literals` or at `template`, locked, by proposal, method and position.
   */
  openEndpointsUnder(
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    template: string,
    manager: Queryable,
  ): Promise<ProposalEndpointRow[]> {
    return manager.query(
      `SELECT pe.id, pe.proposal_id AS "proposalId", pe.method, pe.path, pe.description, pe.request, pe.responses, pe.parameters
         FROM proposal_endpoints pe JOIN proposals p ON p.id = pe.proposal_id
        WHERE p.project_id = $1 AND ${OPEN_FROM_TRAFFIC} AND (pe.path = ANY($5::text[]) OR pe.path = $6)
        ORDER BY pe.proposal_id, pe.method, pe.position
        FOR UPDATE OF pe`,
      [projectId, OPEN_STATUS, captureId, FROM_TRAFFIC, literals, template],
    );
  }

  /** Deletes endpoints of proposals by id. */
  async deleteEndpoints(ids: readonly string[], manager: Queryable): Promise<void> {
    await manager.query('DELETE FROM proposal_endpoints WHERE id = ANY($1::bigint[])', [ids]);
  }

  /** Moves a proposal's endpoint to `path` with the description and shapes given. */
  async rewriteEndpoint(
    id: string,
    path: string,
    description: string | null,
    shapes: EndpointShapes,
    manager: Queryable,
  ): Promise<void> {
    await manager.query(
      'UPDATE proposal_endpoints SET path = $2, description = $3, request = $4, responses = $5, parameters = $6 WHERE id = $1',
      [
        id,
        path,
        description,
        shapes.request === null ? null : JSON.stringify(shapes.request),
        JSON.stringify(shapes.responses),
        shapes.parameters === undefined ? null : JSON.stringify(shapes.parameters),
      ],
    );
  }
}
