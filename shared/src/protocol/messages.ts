/**
 * The agent ↔ backend wire protocol (`WS /api/v1/agents/stream`). JSON text frames, one message
 * each. Every message has a `type`. Bump PROTOCOL_VERSION on an incompatible change.
 */
import type { WireHistogram } from '../runtime/histogram';
import type { Shape } from '../shape/types';
import type { WireConsumer } from './consumers';

export const PROTOCOL_VERSION = 1;

export const ENVIRONMENT_KINDS = ['local', 'ci', 'staging', 'production'] as const;
export type EnvironmentKind = (typeof ENVIRONMENT_KINDS)[number];

/** What the agent runs in. CI runs are identified by pull request; staging and production by build. */
export interface AgentEnvironment {
  kind: EnvironmentKind;
  pullRequest?: string;
  commit?: string;
  build?: string;
}

export type CaptureReason = 'agent-start' | 'command-restart' | 'upstream-restart';

export interface WireCapture {
  /** Made by the agent (UUID); the backend upserts by it, so a resend is harmless. */
  id: string;
  startedAt: string; // ISO 8601
  reason: CaptureReason;
}

/** A body as summarised by the agent. `null` in an observation means there was no body. */
export interface WireBody {
  /** Media type only, lower-case, without parameters, e.g. `application/json`. */
  contentType: string;
  /** Fingerprint of the body's shape, for JSON (and form) bodies whose shape was computed. */
  shape?: string;
  /**
   * With `shape`: the objects the row's exchanges showed at each object place of the shape beyond
   * one per exchange (`instanceExtras`, shape/instances.ts: digits 0-5, counts only), which the
   * fingerprint leaves out. Absent when there were none, and once the row counts six exchanges.
   */
  instances?: string;
  /** The body was larger than the capture limit: counted, not shaped. */
  tooLarge?: true;
  /** The body claimed JSON but did not parse. */
  unparsable?: true;
  /** Counted but not shaped, because shape work was sampled under load. */
  unshaped?: true;
}

/**
 * One aggregated row: the exchanges seen since the last batch with the same
 * (capture, method, path template, status, request body, response body).
 */
export interface WireObservation {
  method: string; // upper-case
  /** Path template, e.g. `/posts/{postId}`; never a raw identifier. */
  path: string;
  status: number;
  /** Query parameter names seen (sorted, unique). Never values. */
  query: string[];
  /** Request header names seen (lower-case, sorted, unique). Never values. */
  requestHeaders: string[];
  /** Response header names seen (lower-case, sorted, unique). Never values. */
  responseHeaders: string[];
  request: WireBody | null;
  response: WireBody | null;
  count: number;
  firstSeen: string; // ISO 8601
  lastSeen: string; // ISO 8601
  /** How long the row's exchanges took (timings and counts only). Absent from agents before it. */
  runtime?: WireRuntime;
  /**
   * The row's calls per consumer pseudonym (protocol/consumers.ts), from an agent with a consumer
   * source configured; absent without one. Calls without a consumer are in `count` only.
   */
  consumers?: WireConsumer[];
  /** Calls of consumers past `MAX_CONSUMERS_PER_ROW` (or the batch's bound): counted, not named. */
  consumersOverflow?: number;
  /**
   * Exchanges of the row the API answered with a `Sunset` header (RFC 8594) whose date had passed
   * when the agent saw the answer: a count, never the date. Absent when none did.
   */
  sunsetPast?: number;
}

/**
 * Timings of a row's exchanges, in milliseconds from the request's arrival at the agent, as
 * histograms (shared/src/runtime/histogram.ts). Each histogram counts at most the row's `count`.
 */
export interface WireRuntime {
  /** Time to first byte: until the response's status and headers came from the upstream. One per exchange. */
  ttfb: WireHistogram;
  /** Time to last byte: until the response ended. Exchanges whose response did not end have none. */
  ttlb: WireHistogram;
  /** Exchanges of the row the client left before its response ended. */
  clientLeft?: number;
}

/** Statuses the agent answers with itself when the upstream fails (agent/src/proxy/errors.ts). */
export const AGENT_FAILURE_STATUSES = [502, 503, 504] as const;

/**
 * Exchanges that never got an answer from the upstream, per (method, path template, status): the
 * agent answered the upstream's failure itself (`status` 502, 503 or 504), or the client left
 * before any answer came (`status` 0). Never evidence of the API's responses; counts and timings only.
 */
export interface WireFailure {
  method: string;
  path: string;
  status: 0 | (typeof AGENT_FAILURE_STATUSES)[number];
  count: number;
  firstSeen: string; // ISO 8601
  lastSeen: string; // ISO 8601
  /** Milliseconds from the request's arrival until the agent answered, or the client left. */
  elapsed: WireHistogram;
}

export interface HelloMessage {
  type: 'hello';
  protocol: number;
  agentId: string;
  agentVersion: string;
  environment: AgentEnvironment;
  capture: WireCapture;
  /** The `ignoreRequests` entries in effect (their source text). */
  rules: string[];
}

export interface BatchMessage {
  type: 'batch';
  /** Unique per batch (UUID); a resend carries the same id and must not be counted twice. */
  batchId: string;
  captureId: string;
  /** Every shape referenced by `observations` that the backend has not acknowledged yet. */
  shapes: Record<string, Shape>;
  observations: WireObservation[];
  /**
   * Requests since the last batch that only got 404/405 on paths matching no known or learned
   * template (scanners, typos: `/.env`, `/wp-admin/…`), counted apart so they never become
   * endpoints. Counts only: the paths themselves never leave the agent (docs/paths.md, Noise).
   */
  unmatched?: WireUnmatched;
  /** Exchanges the upstream never answered, since the last batch (absent from agents before it). */
  failures?: WireFailure[];
}

/** Counts of unmatched noise (see `BatchMessage.unmatched`). */
export interface WireUnmatched {
  /** Requests in this batch. */
  requests: number;
  /** Distinct unmatched paths seen so far in this capture (a running total, not added up). */
  paths: number;
}

/**
 * Templates the agent learned after it may already have sent literal paths they cover
 * (`/users/alice` sent while the position was undecided, `/users/{user}` learned later), and the
 * templates users stated in `service.yml` `paths:`. The backend regroups the rows it stored under
 * literal paths into each template and maps later literal rows of the capture the same way.
 */
export interface LearnedMessage {
  type: 'learned';
  captureId: string;
  templates: string[];
  /**
   * Per template, the literal paths sent for this capture that it covers, as digests
   * (`pathDigest(captureId, path)`, never the paths): only those are regrouped into it, so a
   * sibling the agent keeps literal (`/users/me` beside `/users/{user}`) stays apart. A template
   * without an entry (or a message without `covers`, from an older agent) covers every literal path.
   */
  covers?: Record<string, string[]>;
  /** Stated by users (`service.yml` `paths:`): regrouped across the project, not only the capture. */
  hint?: true;
  /**
   * With `hint`: the `service.yml` `paths:` entries without a parameter (`/users/me`), paths users
   * stated literal. They are never taken into a template, neither stored rows nor later ones.
   */
  literals?: string[];
}

/** A new capture started (command restart, upstream came back). The previous one ended. */
export interface CaptureMessage {
  type: 'capture';
  capture: WireCapture;
  previous?: { id: string; endedAt: string };
}

export interface CaptureEndMessage {
  type: 'capture-end';
  captureId: string;
  endedAt: string;
}

export interface RulesMessage {
  type: 'rules';
  captureId: string;
  rules: string[];
}

export type AgentMessage =
  HelloMessage | BatchMessage | CaptureMessage | CaptureEndMessage | RulesMessage | LearnedMessage;

export interface WelcomeMessage {
  type: 'welcome';
  protocol: number;
  project: string;
  /** Documented path templates, matched first by the agent. */
  templates: string[];
}

/**
 * A batch is committed: durable, and a resend is answered `duplicate`. Its evidence is folded after,
 * whatever the environment (a CI capture's too, since session 30): `capture-ended` says when it is in.
 */
export interface AckMessage {
  type: 'ack';
  batchId: string;
  /** True when this batch id had been committed before (a resend). */
  duplicate?: boolean;
}

/**
 * A capture's end is stored (a `capture-end`, or the `previous` of a `capture`), and the batches its
 * environment row had queued when the end came, the connection's earlier ones among them, are folded
 * into the evidence on any replica (at most 5 s after the end). Batches are acknowledged at their
 * commit (`ack`), before their fold. The agent keeps every end it sent (in its spool too) and sends
 * it again after a reconnect until this arrives.
 */
export interface CaptureEndedMessage {
  type: 'capture-ended';
  captureId: string;
}

export interface TemplatesMessage {
  type: 'templates';
  templates: string[];
}

/**
 * Error codes of the agent stream. `unavailable` is the only one that can succeed later: the backend
 * could not handle the message now (its database is away, say), so the agent keeps it and sends it
 * again. Every other code is a refusal that resending the same message can never turn into success.
 */
export type StreamErrorCode = 'unavailable' | 'invalid-message' | 'too-large' | 'hello-required' | 'refused';

export interface ErrorMessage {
  type: 'error';
  code: StreamErrorCode;
  /** Names what is wrong, e.g. `observations[3].status must be an integer 100-599`. */
  message: string;
  /**
   * True when the same message may succeed later (`unavailable`): a batch is kept and resent with
   * backoff. False for refusals that never can: a batch is dropped (and counted) by the agent.
   */
  retryable: boolean;
  /** The batch this error is about, when it is about one. */
  batchId?: string;
  /** The capture of the `capture-end` this error is about, when it is about one. */
  captureId?: string;
}

export type BackendMessage = WelcomeMessage | AckMessage | CaptureEndedMessage | TemplatesMessage | ErrorMessage;

/** Routes, shared by agent, backend and dashboard. */
export const ROUTES = {
  apiPrefix: '/api/v1',
  agentStream: '/api/v1/agents/stream',
  projectEvents: (project: string) => `/api/v1/projects/${encodeURIComponent(project)}/events`,
} as const;
