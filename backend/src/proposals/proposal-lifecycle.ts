import { Injectable } from '@nestjs/common';
import {
  compareVersions,
  MATRIX_KINDS,
  type MatrixKind,
  OPEN_STATUS,
  type ProposalStepName,
  REMOVAL_MIN_CALLS,
  STEP_OF_KIND,
} from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import { AuditService } from '../audit/audit.service';
import { type Actor } from '../common/principal';
import { DomainError, ErrorCode } from '../common/errors';
import {
  type CellChanges,
  type EnvironmentRow,
  EvidenceService,
  type RemovalEvidence,
} from '../evidence/evidence.service';
import { fourEyesNow } from '../projects/projects.service';
import { VersionStore } from '../versions/version-store';
import type { ProposalVersion } from '../versions/versions.repository';
import { type EventProject, Notifier } from '../webhooks/notifier';
import { type NewProposal, type ProposalRow, ProposalsRepository } from './proposals.repository';

/** A row as a removal's reason names it: `staging build s-12`, `CI run PR #7`. */
function rowLabel(row: Pick<EnvironmentRow, 'kind' | 'name'>): string {
  return row.kind === 'ci' ? `CI run ${row.name}` : `${row.kind} build ${row.name}`;
}

/** Whether a row's evidence shows removed endpoints gone: enough calls, and none of theirs answered but 404, 405 or 410. */
export function showsRemoved(evidence: RemovalEvidence): boolean {
  return evidence.calls >= REMOVAL_MIN_CALLS && evidence.served.length === 0;
}

/**
 * Why a removal's step of `kind` is not recorded, from the newest row of that kind first seen
 * after the approval (null: none yet) and what it shows: `still answered 200 in staging build
 * s-12, 41 calls`.
 */
export function removalWaitReason(
  kind: MatrixKind,
  found: { row: Pick<EnvironmentRow, 'kind' | 'name'>; evidence: RemovalEvidence } | null,
): string {
  if (found === null) return `no ${kind === 'ci' ? 'CI run' : `${kind} build`} first seen since the approval`;
  const { row, evidence } = found;
  if (evidence.served.length > 0) {
    const statuses = evidence.served.map((s) => s.status).join(', ');
    const calls = evidence.served.reduce((sum, s) => sum + s.calls, 0);
    return `still answered ${statuses} in ${rowLabel(row)}, ${calls} call${calls === 1 ? '' : 's'}`;
  }
  if (evidence.calls < REMOVAL_MIN_CALLS)
    return `${rowLabel(row)} has ${evidence.calls} of the ${REMOVAL_MIN_CALLS} calls it needs`;
  return `${rowLabel(row)} shows it gone; the step is recorded at its next fold`;
}

/**
 * The one writer of a proposal's lifecycle (spec §3, steps in `PROPOSAL_STEPS`): a proposal is
 * made Open (or Approved at once, by a documentation commit), approved by a person, then moved
 * through the evidence steps by evidence alone. Every write of `proposals.status` and of
 * `proposal_steps` is here, with its transition event, in the caller's transaction. Evidence tells
 * it which cells changed (`EvidenceService.onCellsChanged`) and, for removals, which row it folded
 * (`EvidenceService.onFolded`), so evidence does not import proposals.
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
    evidence.onFolded((manager, project, row) => this.recordRemovalSteps(manager, project, row));
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
    for (const { row, proposalId } of found) await this.recordStep(manager, project, row, proposalId);
  }

  /**
   * Records the evidence steps of removal proposals a fold of `row` shows (on every fold that adds
   * exchanges: a removed endpoint's cell never changes, so the cells' hook would not tell). A row
   * first seen after a removal's approval shows it once it has REMOVAL_MIN_CALLS calls and none of
   * the removed endpoints' exchanges got anything but 404, 405 or 410. Where the project has no
   * removal waiting for this row's step this is one probe of an empty index.
   */
  private async recordRemovalSteps(manager: EntityManager, project: EventProject, row: EnvironmentRow): Promise<void> {
    const waiting = await this.proposals.removalsAwaiting(
      project.id,
      STEP_OF_KIND[row.kind],
      row.firstSeen,
      OPEN_STATUS,
      manager,
    );
    // In id order, as `removalsAwaiting` lists them (see EvidenceService's class comment).
    for (const removal of waiting)
      if (showsRemoved(await this.evidence.removalEvidence(manager, row.id, removal.endpoints)))
        await this.recordStep(manager, project, row, removal.id);
  }

  /**
   * Why each evidence step of an approved removal proposal is not recorded yet (none for one that
   * is Open or not a removal), from the newest row of each kind first seen after its approval.
   */
  async removalWaits(
    projectId: string,
    proposal: ProposalRow,
    done: readonly ProposalStepName[],
  ): Promise<Array<{ step: ProposalStepName; reason: string }> | undefined> {
    if (!proposal.removes || proposal.approvedAt === null) return undefined;
    const endpoints = await this.proposals.removedEndpoints(proposal.id);
    const waits: Array<{ step: ProposalStepName; reason: string }> = [];
    for (const kind of MATRIX_KINDS) {
      const step = STEP_OF_KIND[kind];
      if (done.includes(step)) continue;
      const found = await this.evidence.removalSince(projectId, kind, proposal.approvedAt, endpoints);
      waits.push({ step, reason: removalWaitReason(kind, found) });
    }
    return waits;
  }

  /** Records step `STEP_OF_KIND[row.kind]` of a proposal that row `row` shows, with its audit entry and event (once). */
  private async recordStep(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    proposalId: string,
  ): Promise<void> {
    const step = STEP_OF_KIND[row.kind];
    const at = await this.proposals.insertEvidenceStep(proposalId, step, row, manager);
    if (at === null) return;
    const proposal = await this.proposals.advanceStatus(proposalId, step, manager);
    if (!proposal) return;
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
