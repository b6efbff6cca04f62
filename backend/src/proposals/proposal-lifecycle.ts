import { Injectable } from '@nestjs/common';
import { compareVersions, OPEN_STATUS, STEP_OF_KIND } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { type Actor } from '../common/principal';
import { DomainError, ErrorCode } from '../common/errors';
import { type CellChanges, EvidenceService } from '../evidence/evidence.service';
import { fourEyesNow } from '../projects/projects.service';
import { VersionStore } from '../versions/version-store';
import type { ProposalVersion } from '../versions/versions.repository';
import { type EventProject, Notifier } from '../webhooks/notifier';
import { type NewProposal, ProposalsRepository } from './proposals.repository';

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
    private readonly proposals: ProposalsRepository,
    private readonly evidence: EvidenceService,
    private readonly notifier: Notifier,
    private readonly audit: AuditService,
    private readonly versions: VersionStore,
  ) {
    evidence.onCellsChanged((manager, project, changes) => this.recordEvidenceSteps(manager, project, changes));
  }

  /** Makes an Open proposal. @returns its id. */
  async open(manager: EntityManager, project: EventProject, proposal: NewProposal): Promise<string> {
    return this.proposals.insert(project.id, proposal, 'Open', null, manager);
  }

  /**
   * Makes a proposal Approved at once (a documentation commit: its maker approves it), with its
   * Approved step at `at`. Never under four eyes: such a commit is an Open proposal instead.
   * @returns its id. @throws DomainError Conflict when the project requires four eyes.
   */
  async openApproved(
    manager: EntityManager,
    project: EventProject,
    proposal: NewProposal,
    approvedBy: string,
    at: Date,
  ): Promise<string> {
    if (await fourEyesNow(manager, project.id))
      throw new DomainError(
        ErrorCode.Conflict,
        'this project requires a second person to approve (four eyes): nothing is approved by the one who made it',
      );
    const id = await this.proposals.insert(project.id, proposal, 'Approved', { by: approvedBy, at }, manager);
    await this.proposals.insertStep(id, 'Approved', approvedBy, at, manager);
    return id;
  }

  /**
   * Approves an Open proposal: its status and Approved step (with the approver, now).
   * @throws DomainError Conflict when it is no longer Open.
   */
  async approve(manager: EntityManager, id: string, approver: Actor): Promise<void> {
    if (!(await this.proposals.approve(id, 'Open', 'Approved', approver.name, manager)))
      throw new DomainError(ErrorCode.Conflict, `proposal ${id} is already approved`);
    await this.proposals.insertStep(id, 'Approved', approver.name, null, manager);
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
      // The proposals that made a version of these endpoints (the versions' domain knows), those
      // of them still waiting for this step (this one's), then every version each of them made.
      const versioning = await this.versions.proposalsVersioning(endpointIds, manager);
      if (versioning.length === 0) continue;
      const waiting = await this.proposals.awaitingStep(
        project.id,
        versioning,
        STEP_OF_KIND[row.kind],
        OPEN_STATUS,
        manager,
      );
      if (waiting.length === 0) continue;
      const awaited = await this.versions.madeByProposals(waiting, manager);
      for (const proposalId of await this.shownBy(manager, row.id, awaited)) found.push({ row, proposalId });
    }
    // Proposals are locked in id order (see EvidenceService's class comment).
    found.sort((a, b) => (a.proposalId < b.proposalId ? -1 : a.proposalId > b.proposalId ? 1 : 0));
    for (const { row, proposalId } of found) {
      const step = STEP_OF_KIND[row.kind];
      const at = await this.proposals.insertEvidenceStep(proposalId, step, row, manager);
      if (at === null) continue;
      const proposal = await this.proposals.advanceStatus(proposalId, step, manager);
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
        at: at.toISOString(),
        actor: null,
        pullRequest: row.pullRequest,
        build: row.build,
        commit: row.commit,
      });
    }
  }

  /**
   * The proposals among `awaited` (the versions each made) that matrix row `rowId` shows: for every
   * version a proposal made, the row's cell of that endpoint shows that version or a later one. The
   * cells are evidence's (`EvidenceService.shownVersions`), their versions' numbers `VersionStore`'s.
   */
  private async shownBy(manager: EntityManager, rowId: string, awaited: readonly ProposalVersion[]): Promise<string[]> {
    const cells = await this.evidence.shownVersions(manager, rowId, [...new Set(awaited.map((v) => v.endpointId))]);
    const ids = [...new Set(cells.values())].filter((id): id is string => id !== null);
    const shownVersions = await this.versions.load(ids, manager);
    const notShown = new Set<string>();
    for (const made of awaited) {
      const id = cells.get(made.endpointId) ?? null;
      const shown = id === null ? undefined : shownVersions.get(id);
      if (shown === undefined || compareVersions(shown, made) < 0) notShown.add(made.proposalId);
    }
    return [...new Set(awaited.map((v) => v.proposalId))].filter((id) => !notShown.has(id));
  }

  private async emitApproved(manager: EntityManager, project: EventProject, proposalId: string): Promise<void> {
    const step = await this.proposals.withStep(proposalId, 'Approved', manager);
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
