/**
 * Payloads the dashboard reads that the shared contract (`@spectator/shared`, DESIGN.md) does not
 * spell out yet: an endpoint's version history. Fields beyond `id` are
 * optional so that a backend sending fewer of them still renders; see docs/dashboard.md.
 */
import type { BodyDocResponse, ChangeResponse, ResponseDocResponse } from '@spectator/shared';

/** One version of a documented endpoint, with the proposal that made it (`GET /endpoints/{id}/versions`). */
export interface EndpointVersionResponse {
  id?: string;
  version: string;
  description?: string;
  createdAt?: string;
  request?: BodyDocResponse | null;
  responses?: ResponseDocResponse[];
  /** What changed from the version before (none for 1.0). */
  changes?: ChangeResponse[];
  proposal?: {
    id: string;
    title: string;
    status: string;
    createdBy: string | null;
    approvedBy: string | null;
    approvedAt: string | null;
  } | null;
}
