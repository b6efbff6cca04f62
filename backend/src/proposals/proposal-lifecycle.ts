import { Injectable } from '@nestjs/common';
import { PROPOSAL_STATUSES, type ProposalStepName, STEP_OF_KIND } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { type Actor } from '../common/principal';
import { DomainError, ErrorCode } from '../common/errors';
import { returningRows } from '../common/returning';
import { sqlRank } from '../common/sql';
import { type CellChanges, EvidenceService } from '../evidence/evidence.service';
import { type EventProject, Notifier } from '../webhooks/notifier';

/** Lifecycle order, for "status = furthest step reached". */
const STATUS_RANK_SQL = sqlRank('status', PROPOSAL_STATUSES);

/** What a new proposal records. */
export interface NewProposal {
  title: string;
  description: string;
  sourceCaptureId: string | null;
  /** The name shown as its maker (`created_by`). */
  createdBy: string;
  /** `actorKey` of its maker (four eyes); null when none is recorded. */
  author: string | null;
}

/**
 * The one writer of a proposal's lifecycle (spec §3, steps in `PROPOSAL_STEPS`): a proposal is
 * made Open (or Approved at once, by a documentation commit), approved by a person, then moved
 * through the evidence steps by evidence alone. Every write of `proposals.status` and of
 * `proposal_steps` is here, with its transition event, in the caller's transaction. Evidence tells
 * it which cells changed (`EvidenceService.onCellsChanged`), so evidence does not import proposals.
 */
@Injectable()
export class ProposalLifecycle {
  constructor(
    private readonly evidence: EvidenceService,
    private readonly notifier: Notifier,
    private readonly audit: AuditService,
  ) {
    evidence.onCellsChanged((manager, project, changes) => this.recordEvidenceSteps(manager, project, changes));
  }

  /** Makes an Open proposal. @returns its id. */
  async open(manager: EntityManager, project: EventProject, proposal: NewProposal): Promise<string> {
    const [row] = (await manager.query(
      `INSERT INTO proposals (project_id, title, description, status, source_capture_id, created_by, author) VALUES ($1, $2, $3, 'Open', $4, $5, $6) RETURNING id`,
      [project.id, proposal.title, proposal.description, proposal.sourceCaptureId, proposal.createdBy, proposal.author],
    )) as Array<{ id: string }>;
    if (!row) throw new Error('proposal insert returned nothing');
    return row.id;
  }

  /**
   * Makes a proposal Approved at once (a documentation commit: its maker approves it), with its
   * Approved step at `at`. @returns its id.
   */
  async openApproved(
    manager: EntityManager,
    project: EventProject,
    proposal: NewProposal,
    approvedBy: string,
    at: Date,
  ): Promise<string> {
    const [row] = (await manager.query(
      `INSERT INTO proposals (project_id, title, description, status, source_capture_id, created_by, author, approved_by, approved_at)
       VALUES ($1, $2, $3, 'Approved', $4, $5, $6, $7, $8) RETURNING id`,
      [
        project.id,
        proposal.title,
        proposal.description,
        proposal.sourceCaptureId,
        proposal.createdBy,
        proposal.author,
        approvedBy,
        at,
      ],
    )) as Array<{ id: string }>;
    if (!row) throw new Error('proposal insert returned nothing');
    await manager.query(`INSERT INTO proposal_steps (proposal_id, step, actor, at) VALUES ($1, 'Approved', $2, $3)`, [
      row.id,
      approvedBy,
      at,
    ]);
    return row.id;
  }

  /**
   * Approves an Open proposal: its status and Approved step (with the approver, now).
   * @throws DomainError Conflict when it is no longer Open.
   */
  async approve(manager: EntityManager, id: string, approver: Actor): Promise<void> {
    const approved = await returningRows(
      manager,
      `UPDATE proposals SET status = 'Approved', approved_by = $2, approved_at = now() WHERE id = $1 AND status = 'Open' RETURNING id`,
      [id, approver.name],
    );
    if (approved.length === 0) throw new DomainError(ErrorCode.Conflict, `proposal ${id} is already approved`);
    await manager.query(
      `INSERT INTO proposal_steps (proposal_id, step, actor, at) VALUES ($1, 'Approved', $2, now())`,
      [id, approver.name],
    );
  }

  /**
   * After new versions of some endpoints were written (an approval or a documentation commit, by
   * proposal `proposalId`; null when none was made): emits the proposal's Approved step, then lets
   * evidence recompute the cells, which may move the proposal further at once.
   */
  async versionsMade(
    manager: EntityManager,
    project: EventProject,
    proposalId: string | null,
    endpointIds: readonly string[],
  ): Promise<void> {
    if (proposalId !== null) await this.emitApproved(manager, project, proposalId);
    await this.evidence.versionsMade(manager, project, endpointIds);
  }

  /**
   * Records the evidence steps of proposals: a row of kind K shows a proposal when, for every
   * version the proposal made, the row's cell of that endpoint shows that version or a later one.
   * Each step is recorded once (unique per proposal and step) when its own evidence appears, even
   * before an earlier step's; the status is the furthest step reached and never moves back.
   */
  private async recordEvidenceSteps(
    manager: EntityManager,
    project: EventProject,
    changes: CellChanges,
  ): Promise<void> {
    const found: Array<{ row: CellChanges[number]['row']; proposalId: string }> = [];
    for (const { row, endpointIds } of changes) {
      if (endpointIds.length === 0) continue;
      const shown: Array<{ id: string }> = await manager.query(
        `SELECT p.id FROM proposals p
          WHERE p.project_id = $1 AND p.status <> 'Open'
            AND p.id IN (SELECT v.proposal_id FROM endpoint_versions v WHERE v.endpoint_id = ANY($2::uuid[]) AND v.proposal_id IS NOT NULL)
            AND NOT EXISTS (SELECT 1 FROM proposal_steps s WHERE s.proposal_id = p.id AND s.step = $4)
            AND NOT EXISTS (
              SELECT 1 FROM endpoint_versions v
                LEFT JOIN evidence_cells c ON c.row_id = $3 AND c.endpoint_id = v.endpoint_id
                LEFT JOIN endpoint_versions cv ON cv.id = c.version_id
               WHERE v.proposal_id = p.id AND (cv.id IS NULL OR (cv.major, cv.minor) < (v.major, v.minor)))`,
        [project.id, endpointIds, row.id, STEP_OF_KIND[row.kind]],
      );
      for (const { id } of shown) found.push({ row, proposalId: id });
    }
    // Proposals are locked in id order (see EvidenceService's class comment).
    found.sort((a, b) => (a.proposalId < b.proposalId ? -1 : a.proposalId > b.proposalId ? 1 : 0));
    for (const { row, proposalId } of found) {
      const step = STEP_OF_KIND[row.kind];
      const [recorded] = (await manager.query(
        `INSERT INTO proposal_steps (proposal_id, step, at, pull_request, build, commit)
         VALUES ($1, $2, now(), $3, $4, $5)
         ON CONFLICT ON CONSTRAINT proposal_steps_once DO NOTHING
         RETURNING at`,
        [proposalId, step, row.pullRequest, row.build, row.commit],
      )) as Array<{ at: Date }>;
      if (!recorded) continue;
      const [proposal] = await returningRows<{ title: string; status: ProposalStepName }>(
        manager,
        `UPDATE proposals SET status = CASE WHEN ${STATUS_RANK_SQL} < $2 THEN $3 ELSE status END WHERE id = $1 RETURNING title, status`,
        [proposalId, PROPOSAL_STATUSES.indexOf(step), step],
      );
      if (!proposal) continue;
      await this.audit.record(
        {
          projectId: project.id,
          actor: null,
          action: 'proposal.step',
          target: proposalId,
          details: { step, pullRequest: row.pullRequest, build: row.build, commit: row.commit },
        },
        manager,
      );
      await this.notifier.emit(manager, project, {
        type: 'proposal.step',
        proposalId,
        title: proposal.title,
        step,
        status: proposal.status,
        at: recorded.at.toISOString(),
        actor: null,
        pullRequest: row.pullRequest,
        build: row.build,
        commit: row.commit,
      });
    }
  }

  private async emitApproved(manager: EntityManager, project: EventProject, proposalId: string): Promise<void> {
    const [step] = (await manager.query(
      `SELECT p.title, p.status, s.actor, s.at FROM proposals p JOIN proposal_steps s ON s.proposal_id = p.id AND s.step = 'Approved' WHERE p.id = $1`,
      [proposalId],
    )) as Array<{ title: string; status: ProposalStepName; actor: string | null; at: Date }>;
    if (!step) return;
    await this.notifier.emit(manager, project, {
      type: 'proposal.step',
      proposalId,
      title: step.title,
      step: 'Approved',
      status: step.status,
      at: step.at.toISOString(),
      actor: step.actor,
      pullRequest: null,
      build: null,
      commit: null,
    });
  }
}
