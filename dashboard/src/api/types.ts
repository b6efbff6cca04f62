/**
 * Payloads the dashboard reads that the shared contract (`@spectator/shared`, DESIGN.md) does not
 * spell out yet: agents seen, webhooks and an endpoint's version history. Fields beyond `id` are
 * optional so that a backend sending fewer of them still renders; see docs/dashboard.md.
 */
import type { BodyDocResponse, EnvironmentKind, ResponseDocResponse } from '@spectator/shared';

export interface AgentResponse {
  id: string;
  environment?: { kind: EnvironmentKind; name?: string } | null;
  kind?: EnvironmentKind;
  pullRequest?: string | null;
  commit?: string | null;
  build?: string | null;
  agentVersion?: string | null;
  lastSeen?: string | null;
  lastSeenAt?: string | null;
  connected?: boolean;
}

export interface WebhookResponse {
  id: string;
  url: string;
  createdAt?: string;
  /** Shown once, in the answer to the creation. */
  secret?: string;
  lastDelivery?: { at: string; status: number | null; ok: boolean } | null;
}

export interface EndpointVersionResponse {
  version: string;
  createdAt?: string;
  proposalId?: string | null;
  proposalTitle?: string | null;
  approvedBy?: string | null;
  description?: string;
  request?: BodyDocResponse | null;
  responses?: ResponseDocResponse[];
}
