import type { DashboardEvent, DriftOrigin, EnvironmentKind, ProposalStepName } from '@spectator/shared';

/** A proposal reached a lifecycle step (once per step, never back). */
export interface ProposalStepEvent {
  type: 'proposal.step';
  proposalId: string;
  title: string;
  step: ProposalStepName;
  /** The proposal's status after this step: the furthest step reached. */
  status: ProposalStepName;
  at: string;
  actor: string | null;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
}

/** An endpoint in an environment row, and the row's pull request, build and commit. */
interface EndpointInRow {
  endpointId: string;
  method: string;
  path: string;
  environment: { kind: EnvironmentKind; name: string };
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
}

/** The version of an endpoint running in an environment changed (or was seen there first). */
export interface VersionChangedEvent extends EndpointInRow {
  type: 'version.changed';
  /** `null` when the endpoint was never seen there before. */
  previous: string | null;
  version: string;
  /** True when no version conforms and `version` is only the nearest one. */
  drift: boolean;
  /** True when `version` is a higher major version than `previous`: a breaking change now runs there. */
  breaking: boolean;
}

/** Endpoints answered production traffic for the first time and are not documented (one event per batch). */
export interface UndocumentedSeenEvent {
  type: 'endpoints.undocumented';
  environment: { kind: EnvironmentKind; name: string };
  build: string | null;
  commit: string | null;
  /** At most `UNDOCUMENTED_NAMED` of them, by path then method. */
  endpoints: Array<{ method: string; path: string }>;
  /** How many there are in all. */
  total: number;
}

/** Endpoints an `endpoints.undocumented` event names at most (the rest are counted in `total`). */
export const UNDOCUMENTED_NAMED = 20;

/**
 * A row's traffic for an endpoint began to conform to no version (a drifting cell appeared), with
 * where the traffic that makes it drift was first seen: the first pull request, staging build and
 * production build (drift/drift.service.ts).
 */
export interface DriftAppearedEvent extends EndpointInRow {
  type: 'drift.appeared';
  /** The nearest version. */
  version: string;
  origins: DriftOrigin[];
  /** The origins in words: `since PR #42 (abc1234), staging build s-102`. */
  since: string;
}

/** What webhooks receive as `data` (docs/webhooks.md). */
export type TransitionEvent = ProposalStepEvent | VersionChangedEvent | UndocumentedSeenEvent | DriftAppearedEvent;

/** The body POSTed to a webhook. */
export interface WebhookBody {
  /** Unique per event; the same in every delivery and retry of it. */
  id: string;
  type: TransitionEvent['type'];
  project: string;
  occurredAt: string;
  data: TransitionEvent;
}

/**
 * The dashboard's (smaller) form of a transition event; null for one the dashboard learns otherwise
 * (new undocumented endpoints come with the capture's own `capture.updated`).
 */
export function toDashboardEvent(event: TransitionEvent): DashboardEvent | null {
  switch (event.type) {
    case 'proposal.step':
      return { type: 'proposal.step', proposalId: event.proposalId, step: event.step, at: event.at };
    case 'version.changed':
      return {
        type: 'version.changed',
        endpointId: event.endpointId,
        environment: event.environment,
        version: event.version,
      };
    case 'endpoints.undocumented':
      return null;
    case 'drift.appeared':
      return { type: 'drift.appeared', endpointId: event.endpointId, environment: event.environment };
  }
}
