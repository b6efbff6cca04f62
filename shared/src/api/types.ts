/**
 * Management API payloads (`/api/v1`), as the backend sends them and the dashboard reads them.
 * Shapes leave the process as JSON Schema 2020-12 (`JsonSchema`), the dialect of OpenAPI 3.1.
 */
import type { EnvironmentKind } from '../protocol/messages';
import type { MatrixKind, ProposalStatus, ProposalStepName } from './lifecycle';

/** A JSON Schema 2020-12 object (the subset we write: type, properties, required, items, oneOf, format). */
export interface JsonSchema {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  description?: string;
  /** Spectator's marker for a shape cut short by a limit. */
  'x-spectator-truncated'?: boolean;
}

export interface ApiError {
  statusCode: number;
  error: string;
  message: string;
}

export interface ProjectResponse {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
  /** Four eyes: a proposal's author cannot approve it (`PATCH /projects/{p}`). */
  fourEyes: boolean;
}

export type TokenScope = 'agent' | 'read' | 'write' | 'admin';

/** A person's role in a project, weakest first (`PROJECT_ROLES`): each may do what the ones before it may. */
export type ProjectRole = 'viewer' | 'editor' | 'approver' | 'admin';

/** `GET /me`: who the bearer token is, so a client offers only the actions it may take. */
export interface WhoAmIResponse {
  /** The token's name, as given at creation (`admin` for the bootstrap token). */
  name: string;
  scope: TokenScope;
  /** Slug of the project the token belongs to; null for the bootstrap admin token (every project). */
  project: string | null;
  /** The environment kinds an agent token may report; null when unlimited. */
  environments: EnvironmentKind[] | null;
  /** `token` (bearer token) or `person` (signed in through the identity provider, session cookie). */
  kind: 'token' | 'person';
  /** A person's role in the project asked about (`GET /projects/{p}/me`). */
  role?: ProjectRole;
  /** The signed-in person; only for `kind: person`. */
  person?: PersonResponse;
  /** Only for `kind: person`: send it as `X-CSRF-Token` on every request that changes something. */
  csrfToken?: string;
}

/** A person as the API shows them: what the identity provider said at their last sign-in. */
export interface PersonResponse {
  id: string;
  name: string | null;
  email: string | null;
  /** The provider's subject (`sub`) of the person. */
  subject: string;
  /** Admin of every project (SPECTATOR_OIDC_ADMIN_GROUPS). */
  instanceAdmin: boolean;
}

/** A person's role given by an admin in a project (`GET /projects/{p}/members`). */
export interface MemberResponse {
  person: PersonResponse;
  role: ProjectRole;
  memberSince: string;
  /** When they last signed in. */
  lastSignInAt: string;
}

/** A provider group's role in a project: its members hold it (the strongest of their roles counts). */
export interface GroupRoleResponse {
  group: string;
  role: ProjectRole;
}

/** `GET /projects/{p}/members`: who may do what in a project. */
export interface MembersResponse {
  members: MemberResponse[];
  groupRoles: GroupRoleResponse[];
}

/** What an audit entry records (`GET /projects/{p}/audit?action=`). */
export const AUDIT_ACTIONS = [
  'project.created',
  'project.updated',
  'documentation.committed',
  'proposal.created',
  'proposal.approved',
  'proposal.step',
  'token.created',
  'token.revoked',
  'webhook.created',
  'webhook.deleted',
  'member.set',
  'member.removed',
  'group-roles.replaced',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who did something: a person (as the provider named them then), a token, or the service itself (evidence). */
export interface AuditActorResponse {
  kind: 'person' | 'token' | 'system';
  /** `users.id` or `tokens.id`; null for the system. */
  id: string | null;
  name: string | null;
  email: string | null;
  /** The provider's subject of a person. */
  subject: string | null;
}

export interface AuditEventResponse {
  /** Increasing; pass the last one as `before` for the next page. */
  id: string;
  at: string;
  action: AuditAction;
  actor: AuditActorResponse;
  /** What it acted on: a proposal, token, webhook or person id, an endpoint list… */
  target: string | null;
  details: Record<string, unknown>;
}

/** `GET /projects/{p}/audit`: newest first. */
export interface AuditPageResponse {
  events: AuditEventResponse[];
  /** `before` for the next (older) page; null at the end. */
  next: string | null;
}

/** `GET /auth/config`: how people sign in here. */
/** `POST /auth/logout`: where to send the browser to sign out of the identity provider too, if anywhere. */
export interface LogoutResponse {
  endSessionUrl: string | null;
}

export interface AuthConfigResponse {
  /** Single sign-on through an OpenID Connect provider is configured. */
  sso: boolean;
  /** The provider's name for the sign-in button (SPECTATOR_OIDC_NAME). */
  providerName: string | null;
}

export interface TokenResponse {
  id: string;
  name: string;
  scope: TokenScope;
  environments: EnvironmentKind[] | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** When the token stops working on its own; null for a token that does not expire. */
  expiresAt: string | null;
  /** The person who made the token; null when a token made it (e.g. the bootstrap admin token). */
  createdBy: { id: string; name: string | null; email: string | null } | null;
  /** Only in the answer to the creation, never again. */
  token?: string;
}

export interface CaptureResponse {
  id: string;
  environment: { kind: EnvironmentKind; name: string };
  commit: string | null;
  build: string | null;
  pullRequest: string | null;
  startedAt: string;
  endedAt: string | null;
  interactions: number;
  undocumented: number;
  diffs: number;
  rules: string[];
  /**
   * Noise counted apart: requests that only got 404/405 on paths matching no known or learned
   * template (scanners, typos), and how many distinct paths they hit. The paths are never stored.
   */
  unmatched: { requests: number; paths: number };
  /**
   * Requests of endpoints this capture did not keep: it had its cap of endpoints already (the
   * backend's SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE). Counted, never stored.
   */
  overflow: { requests: number };
}

/** An agent (evidence source) seen by a project: `GET /projects/{p}/agents`, newest first. */
export interface AgentResponse {
  id: string;
  /** The agent's own id (its hello's `agentId`), unique within the project. */
  agentKey: string;
  /** The agent's software version. */
  version: string;
  /** From its current capture (the newest it started). */
  environment: { kind: EnvironmentKind; name: string };
  pullRequest: string | null;
  commit: string | null;
  build: string | null;
  currentCaptureId: string | null;
  firstSeen: string;
  lastSeen: string;
  /** Connected to some backend replica now (an open connection whose replica is alive). */
  connected: boolean;
}

export interface UndocumentedEndpointResponse {
  method: string;
  path: string;
  interactions: number;
  /** Requests and responses of interest: 1 per request with a JSON body + 1 per response with one. */
  count: number;
}

export type ChangeKind =
  | 'added'
  | 'removed'
  | 'type changed'
  | 'now optional'
  | 'now required'
  | 'new status'
  | 'new content type'
  /** The whole endpoint, by a removal proposal (`in: 'response'`, `at: '$'`, breaking). */
  | 'endpoint removed';

/** Where a documented request parameter is sent (path parameters are the path template's own). */
export type ParameterLocation = 'query' | 'header';

/** A documented query parameter or request header: its name (never a value) and whether every request sends it. */
export interface ParameterDoc {
  name: string;
  required: boolean;
}

/**
 * An endpoint's documented query parameters and request headers (header names lower-case, each
 * list sorted by name). Absent or null: not documented, so never compared with traffic.
 */
export interface ParametersDoc {
  query: ParameterDoc[];
  headers: ParameterDoc[];
}

export interface ChangeResponse {
  change: ChangeKind;
  /** The request or response body, or a query parameter / request header (then `at` is its name). */
  in: 'request' | 'response' | ParameterLocation;
  status?: number;
  /** JSON path of the field, e.g. `$.author` or `$.items[].id`; `$` for the body itself; the name of a query parameter or header. */
  at: string;
  documented?: JsonSchema;
  observed?: JsonSchema;
  breaking: boolean;
}

export interface DiffResponse {
  endpointId: string;
  method: string;
  path: string;
  version: string;
  interactions: number;
  breaking: boolean;
  changes: ChangeResponse[];
}

export interface BodyDocResponse {
  contentType: string;
  shape: JsonSchema | null;
}

export interface ResponseDocResponse extends BodyDocResponse {
  status: number;
}

export interface ObservedEndpointResponse {
  method: string;
  path: string;
  interactions: number;
  /** The request body of the exchanges the API accepted (2xx/3xx): what documenting it documents. */
  request: BodyDocResponse | null;
  responses: ResponseDocResponse[];
  /** Request bodies the API rejected (4xx), per status: shown for review, never documented. */
  rejectedRequests: RejectedRequestResponse[];
  query: string[];
  requestHeaders: string[];
}

/** The request bodies of one 4xx status of an endpoint (merged shapes of the most frequent media type). */
export interface RejectedRequestResponse {
  status: number;
  /** Exchanges with this status and a request body. */
  interactions: number;
  contentType: string;
  shape: JsonSchema | null;
}

export interface EndpointResponse {
  id: string;
  method: string;
  path: string;
  description: string;
  version: string;
  request: BodyDocResponse | null;
  responses: ResponseDocResponse[];
  /** Documented query parameters and request headers; null when the version does not document them. */
  parameters: ParametersDoc | null;
  updatedAt: string;
}

export interface DocumentationRequest {
  captureId: string;
  endpoints: Array<{ method: string; path: string; description?: string; documentBodies: boolean }>;
  message?: string;
}

export interface DocumentationResponse {
  proposalId: string | null;
  /**
   * True when the project requires four eyes: nothing was documented yet, `proposalId` is an Open
   * proposal another approver approves, and `versions` are those it would make (`endpointId` null
   * for an endpoint not documented yet).
   */
  awaitingApproval?: boolean;
  versions: Array<{
    endpointId: string | null;
    method: string;
    path: string;
    version: string;
    previous: string | null;
  }>;
}

export interface VersionMatrixRow {
  kind: EnvironmentKind;
  name: string;
  build?: string | null;
  pullRequest?: string | null;
  commit: string | null;
  lastSeen: string;
}

export interface VersionCell {
  version: string; // "1.1" or "N/A"
  drift?: boolean;
}

/**
 * The runtime beside one matrix cell: what the row's agents measured of the endpoint's exchanges
 * since the row began (every version it ran there; the cell's version is the one they conform to).
 */
export interface CellRuntime {
  /** The cell's endpoint: its index in `endpoints`. */
  column: number;
  requests: number;
  /** Server errors (5xx, and 502/503/504 the agent answered for a failed upstream) per request, 0–1. */
  errorRate: number;
  /** 95th percentile of time to last byte in milliseconds (within 8.6 %); null when no response ended. */
  p95: number | null;
}

export interface VersionMatrixResponse {
  /** `removed`: the latest version removed the endpoint (traffic answered 404, 405 or 410 shows it). */
  endpoints: Array<{ id: string; method: string; path: string; version: string; removed?: boolean }>;
  rows: VersionMatrixRow[];
  /** cells[rowIndex][endpointIndex] */
  cells: VersionCell[][];
  /** runtime[rowIndex]: the row's cells that have runtime evidence, by column (sparse, ascending). */
  runtime: CellRuntime[][];
  nextCursor: string | null;
}

export interface ProposalStepResponse {
  step: ProposalStepName;
  actor?: string | null;
  at: string;
  pullRequest?: string | null;
  build?: string | null;
  commit?: string | null;
}

/** `POST /projects/{p}/openapi/import`: the proposal made from an OpenAPI document, and what was simplified. */
export interface OpenApiImportResponse {
  proposal: ProposalResponse;
  /** Each simplification, naming the operation and JSON Pointer (a `default` response skipped, a recursive schema cut, …). */
  warnings: string[];
}

export interface ProposalResponse {
  id: string;
  title: string;
  description: string;
  status: ProposalStatus;
  createdAt: string;
  createdBy: string | null;
  endpoints: Array<{
    endpointId: string | null;
    method: string;
    path: string;
    fromVersion: string | null;
    toVersion: string;
    changes: ChangeResponse[];
  }>;
  steps: ProposalStepResponse[];
  /** True for a proposal that removes its endpoints (each one's next major version is marked removed). */
  removal?: boolean;
  /**
   * An approved removal's evidence steps not reached yet, each with why, from the newest row of its
   * kind first seen after the approval: `still answered 200 in staging build s-12, 41 calls`.
   */
  waiting?: Array<{ step: ProposalStepName; reason: string }>;
}

/** Dashboard live events on `WS /api/v1/projects/{p}/events`. */
export type DashboardEvent =
  | {
      type: 'capture.started';
      captureId: string;
      environment: { kind: EnvironmentKind; name: string };
      startedAt: string;
    }
  | { type: 'capture.updated'; captureId: string }
  | { type: 'documentation.committed'; endpointIds: string[] }
  /** A user stated a template (`POST /path-hints`): what was stored under its literal paths is now under it. */
  | { type: 'paths.hinted'; template: string; regrouped: number }
  | { type: 'proposal.step'; proposalId: string; step: ProposalStepName; at: string }
  | {
      type: 'version.changed';
      endpointId: string;
      environment: { kind: EnvironmentKind; name: string };
      version: string;
    }
  /** A row's traffic for an endpoint began to conform to no version (webhook `drift.appeared`). */
  | { type: 'drift.appeared'; endpointId: string; environment: { kind: EnvironmentKind; name: string } }
  /** An agent's WebSocket opened (`connected`) or closed on some replica (an agent whose replica died shows as gone after its heartbeat lapses, without an event). */
  | { type: 'agent.connection'; agentId: string; connected: boolean };

/** `GET /projects/{p}/evidence?environment=…`: which version of each documented endpoint runs there now. */
export interface EvidenceResponse {
  environment: EnvironmentKind;
  pullRequest: string | null;
  endpoints: Array<{
    endpointId: string;
    method: string;
    path: string;
    /** `"1.1"`, or `"N/A"` when never seen there. */
    version: string;
    /** True when no version conforms and `version` is the nearest one. */
    drift: boolean;
    /** The matrix row the evidence comes from (`PR #42`, a build), null when never seen. */
    row: string | null;
    pullRequest: string | null;
    build: string | null;
    commit: string | null;
    lastSeen: string | null;
  }>;
}

/** A webhook registration; `secret` only in the answer to its creation. */
/** How a webhook's deliveries are written: Spectator's JSON event, a Slack message (Block Kit) or a Teams message (an Adaptive Card). */
export const WEBHOOK_FORMATS = ['json', 'slack', 'teams'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export interface WebhookResponse {
  id: string;
  url: string;
  format: WebhookFormat;
  createdAt: string;
  createdBy: string | null;
  secret?: string;
}

/** One entry of a webhook's delivery log. */
export interface WebhookDeliveryResponse {
  id: string;
  eventId: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

/** `POST /projects/{p}/path-hints`: a template a user states (e.g. "this segment is a parameter"). */
export interface PathHintRequest {
  /** `/repos/{owner}/{repo}`: each `{name}` segment is a parameter. */
  template: string;
}

/** A stated template (`GET /projects/{p}/path-hints`). */
export interface PathHintResponse {
  template: string;
  createdBy: string | null;
  createdAt: string;
}

/** The answer to a new hint: it, and how many stored rows were merged into it at once. */
export interface PathHintCreatedResponse extends PathHintResponse {
  regrouped: number;
}

/** Latency percentiles of one step, milliseconds (within the histograms' 8.6 %). */
export interface LatencyPercentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** One version's exchanges over one step of a runtime series. */
export interface RuntimePoint {
  /** The step's start (ISO 8601). */
  at: string;
  /** Every exchange: answered by the upstream, by the agent for a failed upstream, or left unanswered. */
  requests: number;
  /** Requests per second over the step. */
  requestRate: number;
  /** This version's part of the requests of every version in the step (0–1): a canary at 30 % shows 0.3. */
  share: number;
  /** Answered 5xx by the upstream, or 502/503/504 by the agent for it. */
  serverErrors: number;
  /** `serverErrors / requests`. */
  errorRate: number;
  /** Answered by the agent because the upstream failed (502/503/504). */
  upstreamFailures: number;
  /** Left by the client before the response ended. */
  clientLeft: number;
  /** Time to first byte; null when no exchange of the step got an answer from the upstream. */
  ttfb: LatencyPercentiles | null;
  /** Time to last byte; null when no response of the step ended. */
  ttlb: LatencyPercentiles | null;
}

/** `GET /projects/{p}/endpoints/{id}/runtime`: how each version of an endpoint behaves in one environment over time. */
export interface RuntimeResponse {
  /** `id` is null for an endpoint asked by method and path that is not documented. */
  endpoint: { id: string | null; method: string; path: string };
  environment: EnvironmentKind;
  /** The environment row asked for (`PR #42`, a build), or null for every row of the kind. */
  name: string | null;
  /** The first step's start (ISO 8601). */
  since: string;
  /** Seconds each point covers. */
  step: number;
  /** One series per version seen (`''`: no version known), each with the whole window summed up. */
  versions: Array<{ version: string; total: Omit<RuntimePoint, 'at'>; points: RuntimePoint[] }>;
}

/** One version's requests over one step of a share series, and its part of every version's requests then. */
export interface VersionSharePoint {
  /** The step's start (ISO 8601). */
  at: string;
  requests: number;
  /** 0–1 of the step's requests of every version. */
  share: number;
}

/** One version's part of some requests (`''`: traffic of no known version, e.g. undocumented endpoints). */
export interface VersionShare {
  version: string;
  requests: number;
  /** 0–1: a canary on 30 % of the requests shows 0.3. */
  share: number;
}

/**
 * `GET /projects/{p}/runtime/share`: which versions an environment's traffic ran on, over every
 * endpoint together (a version string counts wherever an endpoint runs it) over time, and per
 * endpoint over the window: a rollout in numbers.
 */
export interface VersionShareResponse {
  environment: EnvironmentKind;
  /** The environment row asked for (`PR #42`, a build), or null for every row of the kind. */
  name: string | null;
  /** The first step's start (ISO 8601). */
  since: string;
  /** Seconds each point covers. */
  step: number;
  /** Every endpoint's requests: per version, the window's total and one point per step with traffic. */
  versions: Array<VersionShare & { points: VersionSharePoint[] }>;
  /** Per endpoint with traffic (busiest first), its requests per version over the window. */
  endpoints: Array<{
    /** Null for an endpoint that is not documented. */
    endpointId: string | null;
    method: string;
    path: string;
    requests: number;
    versions: VersionShare[];
  }>;
}

/** One endpoint's runtime in an environment row since the row began: documented or not. */
export interface EndpointRuntimeFigures {
  method: string;
  path: string;
  requests: number;
  /** Server errors (5xx, and 502/503/504 the agent answered for a failed upstream) per request, 0–1. */
  errorRate: number;
  /** 95th percentile of time to last byte in milliseconds (within 8.6 %); null when no response ended. */
  p95: number | null;
}

/**
 * `GET /projects/{p}/captures/{id}/runtime`: the runtime of every endpoint of the capture's
 * environment row (its pull request's CI runs, or its build) since the row began, undocumented
 * endpoints too. `environment` is null for a local capture, which has no row.
 */
export interface CaptureRuntimeResponse {
  environment: { kind: MatrixKind; name: string } | null;
  endpoints: EndpointRuntimeFigures[];
}
