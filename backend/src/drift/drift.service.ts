import { Injectable } from '@nestjs/common';
import { type DriftCellResponse, type DriftOrigin, driftSinceText } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import type { EnvironmentRow, StoredExchange } from '../evidence/evidence.repository';
import { type DriftChange, EvidenceService } from '../evidence/evidence.service';
import type { ProjectEntity } from '../projects/project.entity';
import { type EventProject, Notifier } from '../webhooks/notifier';
import { type DriftCellRow, DriftRepository, type DriftRow } from './drift.repository';

/** Drifting cells listed at most by `GET /drift`. */
export const DRIFT_CELLS_LIMIT = 1_000;

/** What identifies one kind of exchange wherever it is seen: its status, content types and shape fingerprints. */
export function exchangeSignature(exchange: StoredExchange): string {
  return JSON.stringify([
    exchange.status,
    exchange.requestContentType,
    exchange.requestShape,
    exchange.responseContentType,
    exchange.responseShape,
  ]);
}

/** The drifting cells of stored rows, each with its origins, in the order read. */
function cellsOf(rows: readonly DriftCellRow[]): DriftCellResponse[] {
  const cells = new Map<string, DriftCellResponse>();
  for (const row of rows) {
    const key = `${row.rowId} ${row.endpointId}`;
    let cell = cells.get(key);
    if (cell === undefined)
      cells.set(
        key,
        (cell = {
          endpointId: row.endpointId,
          method: row.method,
          path: row.path,
          version: row.version,
          environment: { kind: row.kind, name: row.name },
          pullRequest: row.pullRequest,
          build: row.build,
          commit: row.commit,
          origins: [],
          since: '',
        }),
      );
    if (row.originKind !== null)
      cell.origins.push({
        kind: row.originKind,
        name: row.originName as string,
        pullRequest: row.originPullRequest,
        build: row.originBuild,
        commit: row.originCommit,
        seenAt: new Date(row.originSeenAt as Date).toISOString(),
      } satisfies DriftOrigin);
  }
  for (const cell of cells.values()) cell.since = driftSinceText(cell.origins, cell.environment);
  return [...cells.values()];
}

/**
 * Where drift began (issue 18): for each drifting cell of the matrix, the first pull request,
 * commit and build where the traffic that makes it drift was seen, across CI, staging and
 * production. Told by evidence in each batch's transaction which cells drift (and with which
 * exchanges), it records the first row of each kind per exchange signature, keeps the drifting
 * cells, and emits `drift.appeared` (webhooks, dashboard) when a row's cell begins to drift.
 */
@Injectable()
export class DriftService {
  constructor(
    private readonly repository: DriftRepository,
    private readonly notifier: Notifier,
    evidence: EvidenceService,
  ) {
    evidence.onDrift((manager, project, row, changes) => this.record(manager, project, row, changes));
  }

  private async record(
    manager: EntityManager,
    project: EventProject,
    row: EnvironmentRow,
    changes: readonly DriftChange[],
  ): Promise<void> {
    const drifting = changes.filter((change) => change.drift);
    const where: DriftRow = {
      id: row.id,
      kind: row.kind,
      name: row.name,
      pullRequest: row.pullRequest,
      build: row.build,
      commit: row.commit,
    };
    await this.repository.addOrigins(
      manager,
      project.id,
      where,
      drifting.flatMap((change) =>
        change.exchanges.map((exchange) => ({
          endpointId: change.endpoint.id,
          signature: exchangeSignature(exchange),
          seenAt: new Date(exchange.lastSeen).toISOString(),
          // The push that brought it, not the row's newest (a pull request's row follows its pushes).
          commit: exchange.firstCommit ?? row.commit,
          build: exchange.firstBuild ?? row.build,
        })),
      ),
    );
    await this.repository.putCells(
      manager,
      project.id,
      where,
      drifting.map((change) => ({
        endpointId: change.endpoint.id,
        method: change.endpoint.method,
        path: change.endpoint.path,
        version: change.version,
        signatures: [...new Set(change.exchanges.map(exchangeSignature))],
      })),
    );
    await this.repository.dropCells(
      manager,
      row.id,
      changes.filter((change) => !change.drift).map((change) => change.endpoint.id),
    );
    const appeared = drifting.filter((change) => change.appeared).map((change) => change.endpoint.id);
    if (appeared.length === 0) return;
    for (const cell of cellsOf(await this.repository.cellsOf(manager, row.id, appeared)))
      await this.notifier.emit(manager, project, {
        type: 'drift.appeared',
        endpointId: cell.endpointId,
        method: cell.method,
        path: cell.path,
        environment: cell.environment,
        pullRequest: cell.pullRequest,
        build: cell.build,
        commit: cell.commit,
        version: cell.version,
        origins: cell.origins,
        since: cell.since,
      });
  }

  /** `GET /drift`: the project's drifting cells with where each began. */
  async list(project: ProjectEntity): Promise<DriftCellResponse[]> {
    return cellsOf(await this.repository.project(project.id, DRIFT_CELLS_LIMIT));
  }
}
