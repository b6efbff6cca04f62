import { MATRIX_KINDS, type MatrixKind } from './lifecycle';

/** The first place of one kind where traffic a drift shows was seen (the first pull request, staging build, production build). */
export interface DriftOrigin {
  kind: MatrixKind;
  /** The matrix row: `PR #42`, or the build. */
  name: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  /**
   * For a drifting cell, when that traffic was last seen in the batch that first showed it there;
   * for a diff, when that row's evidence first had it (ISO 8601).
   */
  seenAt: string;
}

/**
 * Where the traffic of a diff was first seen: the first pull request, staging build and production
 * build (in that order, one per kind at most) whose evidence has one of the exchanges that make
 * it differ, and that in words as for drift (`since PR #42 (abc1234), staging build s-102`).
 */
export interface DiffOrigins {
  origins: DriftOrigin[];
  since: string;
}

/**
 * `GET /projects/{p}/captures/{id}/diffs/origins`: one per diff of the page asked for (the diffs'
 * paging), in the diffs' order.
 */
export interface DiffOriginsResponse extends DiffOrigins {
  endpointId: string;
  method: string;
  path: string;
}

/**
 * `GET /projects/{p}/drift`: one per drifting cell of the matrix (an environment row whose traffic
 * for an endpoint conforms to no version), with where the traffic that makes it drift was first
 * seen, per kind of environment, and that in words (`since PR #42 (abc1234), staging build s-102`).
 */
export interface DriftCellResponse {
  endpointId: string;
  method: string;
  path: string;
  /** The nearest version (the one most of the row's traffic conforms to). */
  version: string;
  environment: { kind: MatrixKind; name: string };
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  /** The first pull request, staging build and production build (in that order) where it was seen; one per kind at most. */
  origins: DriftOrigin[];
  since: string;
}

const ORIGIN_ORDER: readonly MatrixKind[] = MATRIX_KINDS;

/** `PR #42 (abc1234)`, `staging build s-102`: one origin in words (a commit shortened to 7 characters). */
export function driftOriginText(origin: DriftOrigin): string {
  const commit = origin.commit === null ? '' : ` (${origin.commit.slice(0, 7)})`;
  return origin.kind === 'ci' ? `${origin.name}${commit}` : `${origin.kind} build ${origin.name}`;
}

/**
 * Where a drift began, in words: `since PR #42 (abc1234), staging build s-102`, its origins in
 * lifecycle order up to the cell's own kind (a pull request's drift does not begin in a later
 * staging build), leaving out the cell's own row unless nothing came before it. `own` null (a
 * local capture, in no row): every origin.
 */
export function driftSinceText(
  origins: readonly DriftOrigin[],
  own: { kind: MatrixKind; name: string } | null,
): string {
  const ordered = [...origins]
    .filter((o) => own === null || ORIGIN_ORDER.indexOf(o.kind) <= ORIGIN_ORDER.indexOf(own.kind))
    .sort((a, b) => ORIGIN_ORDER.indexOf(a.kind) - ORIGIN_ORDER.indexOf(b.kind));
  const others = ordered.filter((o) => own === null || !(o.kind === own.kind && o.name === own.name));
  const shown = others.length > 0 ? others : ordered;
  return shown.length === 0 ? '' : `since ${shown.map(driftOriginText).join(', ')}`;
}
