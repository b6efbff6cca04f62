import {
  diffEndpoint,
  type EndpointShapes,
  nextVersion,
  NO_PARAMETERS,
  type ShapeChange,
  type Version,
} from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { extendEndpointShapes, NOTHING_DOCUMENTED } from './endpoint-shapes';
import { versionsRepository } from './versions.repository';

/**
 * How proposed shapes become documentation: `extend` merges observed shapes into what is
 * documented (accepting a capture's changes keeps what was documented accepted), `replace` takes
 * planned shapes as the new documentation (design first), `remove` removes the endpoint (a next
 * major version marked removed, documenting no request or responses).
 */
export type ProposalMode = 'extend' | 'replace' | 'remove';

/** The current version of an endpoint, as far as the next version depends on it. */
export type CurrentVersion = EndpointShapes & Version & { removed?: boolean };

/** The version a proposal gives an endpoint: its documentation, its changes and its number. */
export interface PlannedVersion {
  documented: EndpointShapes;
  changes: ShapeChange[];
  version: Version;
  removed: boolean;
}

/** The one change of a removal: the whole endpoint, breaking (so the next major). */
export const ENDPOINT_REMOVED: ShapeChange = Object.freeze({
  change: 'endpoint removed',
  in: 'response',
  at: '$',
  breaking: true,
});

/**
 * Why an endpoint cannot be removed now (not documented, or removed already), or null when it can.
 * `name` is `GET /path`.
 */
export function notRemovable(current: CurrentVersion | null, name: string): string | null {
  if (current === null) return `${name} is not documented`;
  if (current.removed === true) return `${name} is removed already (${current.major}.${current.minor})`;
  return null;
}

/**
 * The next version from the current one (null: not documented yet) and proposed shapes, by the
 * shared rules: 1.0 first; then next minor when every change is non-breaking, next major otherwise.
 * A current version without parameter lists counts as documenting none when the new one has
 * them, so documenting parameters for the first time is a change (`added`, the next minor).
 */
export function planVersion(
  current: CurrentVersion | null,
  shapes: EndpointShapes,
  mode: ProposalMode,
): PlannedVersion {
  if (mode === 'remove')
    return {
      documented: NOTHING_DOCUMENTED,
      changes: [ENDPOINT_REMOVED],
      version: nextVersion(current, [ENDPOINT_REMOVED]),
      removed: true,
    };
  const documented = mode === 'replace' ? shapes : extendEndpointShapes(current ?? NOTHING_DOCUMENTED, shapes);
  const before =
    current !== null && !current.parameters && documented.parameters
      ? { ...current, parameters: NO_PARAMETERS }
      : current;
  const changes = before === null ? [] : diffEndpoint(before, documented);
  return { documented, changes, version: nextVersion(current, changes), removed: false };
}

/** What one write left as the endpoint's current version. */
export interface WrittenVersion {
  endpointId: string;
  /** The current version after the write: the new one, or the one kept (`made` false). */
  versionId: string;
  version: Version;
  previous: Version | null;
  changes: ShapeChange[];
  /** False when `keepUnchanged` kept the current version. */
  made: boolean;
}

/** What to version: one endpoint's shapes, by a proposal (its id, or made on first need). */
export interface VersionInput {
  projectId: string;
  method: string;
  path: string;
  /** Null keeps the endpoint's description. */
  description: string | null;
  shapes: EndpointShapes;
  mode: ProposalMode;
  /**
   * The proposal the version belongs to. A function is called only when a version is made, so a
   * documentation commit makes its proposal only when something changes.
   */
  proposalId: string | (() => Promise<string>);
  /**
   * True: a documented endpoint whose documentation would not change keeps its version (only a
   * new description is written). False: every write makes a version (approval of a proposal).
   */
  keepUnchanged: boolean;
}

/** What a write would make, planned without writing (a documentation commit held for approval). */
export interface PlannedWrite {
  /** Null for an endpoint not documented or seen yet. */
  endpointId: string | null;
  version: Version;
  previous: Version | null;
  changes: ShapeChange[];
  /** False when neither the shapes nor the description would change. */
  changesAnything: boolean;
}

/**
 * The version `writeNextVersion` would make of an endpoint now (with `keepUnchanged`), reading only:
 * a documentation commit that waits for a second person (four eyes) proposes what changes.
 */
export async function planNextVersion(
  manager: EntityManager,
  input: Omit<VersionInput, 'proposalId' | 'keepUnchanged'>,
): Promise<PlannedWrite> {
  const endpoint = await versionsRepository.findEndpoint(manager, input.projectId, input.method, input.path);
  const current =
    endpoint === null || endpoint.currentVersionId === null
      ? null
      : await versionsRepository.shapesOf(manager, endpoint.currentVersionId);
  const plan = planVersion(current, input.shapes, input.mode);
  const kept = current && { major: current.major, minor: current.minor };
  const describes = input.description !== null && input.description !== endpoint?.description;
  return {
    endpointId: endpoint?.id ?? null,
    version: current !== null && plan.changes.length === 0 && !describes ? (kept as Version) : plan.version,
    previous: kept,
    changes: plan.changes,
    changesAnything: current === null || plan.changes.length > 0 || describes,
  };
}

/**
 * The one way endpoint versions are written (documentation commits and proposal approvals), inside
 * a transaction: upserts the endpoint row (which locks it until the transaction ends, so
 * concurrent writers of one endpoint queue up: callers write endpoints in path, method order so
 * they cannot deadlock), plans the version from the current one, inserts it and makes it current.
 */
export async function writeNextVersion(manager: EntityManager, input: VersionInput): Promise<WrittenVersion> {
  const endpoint = await versionsRepository.lockEndpoint(manager, input.projectId, input.method, input.path);
  const current =
    endpoint.currentVersionId === null ? null : await versionsRepository.shapesOf(manager, endpoint.currentVersionId);
  if (input.mode === 'remove') {
    const refused = notRemovable(current, `${input.method} ${input.path}`);
    if (refused !== null) throw new DomainError(ErrorCode.Conflict, refused);
  }
  const plan = planVersion(current, input.shapes, input.mode);
  const description = input.description ?? endpoint.description;
  if (input.keepUnchanged && current && endpoint.currentVersionId !== null && plan.changes.length === 0) {
    if (description !== endpoint.description)
      await versionsRepository.setDescription(manager, endpoint.id, description);
    const kept = { major: current.major, minor: current.minor };
    return {
      endpointId: endpoint.id,
      versionId: endpoint.currentVersionId,
      version: kept,
      previous: kept,
      changes: [],
      made: false,
    };
  }
  const proposalId = typeof input.proposalId === 'string' ? input.proposalId : await input.proposalId();
  const versionId = await versionsRepository.insertCurrent(manager, {
    endpointId: endpoint.id,
    version: plan.version,
    description,
    documented: plan.documented,
    changes: plan.changes,
    proposalId,
    removed: plan.removed,
  });
  return {
    endpointId: endpoint.id,
    versionId,
    version: plan.version,
    previous: current ? { major: current.major, minor: current.minor } : null,
    changes: plan.changes,
    made: true,
  };
}
