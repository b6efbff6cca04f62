/**
 * The proposal lifecycle and the environments that move it (spec §3), defined once: the backend
 * (its SQL included), the dashboard and a test of the database's CHECK constraints read these.
 */
import type { EnvironmentKind } from '../protocol/messages';

/** A proposal's steps in lifecycle order: Approved by a person, the others by evidence alone. */
export const PROPOSAL_STEPS = ['Approved', 'Implemented', 'Appeared in Staging', 'Appeared in Production'] as const;
export type ProposalStepName = (typeof PROPOSAL_STEPS)[number];

/** A proposal's status: Open until approved, then the furthest step reached (it never moves back). */
export const PROPOSAL_STATUSES = ['Open', ...PROPOSAL_STEPS] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** The status of a proposal not approved yet (the only one whose endpoints still change). */
export const OPEN_STATUS = PROPOSAL_STATUSES[0];

/** Kinds of environment whose traffic is evidence: each makes rows of the version matrix (`local` does not). */
export const MATRIX_KINDS = ['ci', 'staging', 'production'] as const satisfies readonly EnvironmentKind[];
export type MatrixKind = (typeof MATRIX_KINDS)[number];

/** The step that evidence from an environment of each kind records. */
export const STEP_OF_KIND: Readonly<Record<MatrixKind, Exclude<ProposalStepName, 'Approved'>>> = {
  ci: 'Implemented',
  staging: 'Appeared in Staging',
  production: 'Appeared in Production',
};

/**
 * The statuses that show a removed endpoint gone (not found, method not allowed, gone): a removal
 * proposal's evidence step is recorded where an endpoint's exchanges got none but these, and traffic
 * answered so conforms to the removed version.
 */
export const REMOVED_STATUSES: readonly number[] = [404, 405, 410];

/**
 * The calls an environment row (a CI run, a build) first seen after a removal was approved must have
 * had before its absence of the removed endpoints counts as evidence: a build that served nothing yet
 * shows nothing.
 */
export const REMOVAL_MIN_CALLS = 100;

/** The version shown where an environment never saw an endpoint (matrix cells, evidence, comparisons). */
export const NOT_SEEN_VERSION = 'N/A';
