import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type AgentEnvironment,
  type BatchMessage,
  countOfInterest,
  type EnvironmentKind,
  fingerprint,
  type HelloMessage,
  PROTOCOL_VERSION,
  type WelcomeMessage,
  type WireBody,
  type WireCapture,
  type WireObservation,
} from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../auth/tokens.service';
import { LruCache } from '../common/lru-cache';
import { EndpointsService } from '../endpoints/endpoints.service';
import { EventsService } from '../events/events.service';
import { EvidenceService } from '../evidence/evidence.service';
import { MetricsService } from '../health/metrics.service';
import { ProjectsService } from '../projects/projects.service';
import { WireError } from './wire-validation';

/** What a connection knows after its hello. */
export interface AgentSession {
  projectId: string;
  projectSlug: string;
  agentRowId: string;
  environment: AgentEnvironment;
  rules: string[];
  /** Captures of this project already checked by this connection. */
  knownCaptures: Set<string>;
}

/** A fatal problem: the connection is closed after the error reply. */
export class FatalWireError extends WireError {}

/** The display name of an environment: CI runs by pull request, the others by kind. */
export function environmentName(environment: AgentEnvironment): string {
  if (environment.kind === 'ci' && environment.pullRequest) return `PR #${environment.pullRequest}`;
  return environment.kind;
}

interface AggregatedRow {
  method: string;
  path: string;
  status: number;
  req_ct: string | null;
  req_fp: string | null;
  req_note: string | null;
  res_ct: string | null;
  res_fp: string | null;
  res_note: string | null;
  query: string[];
  req_h: string[];
  res_h: string[];
  count: number;
  first_seen: string;
  last_seen: string;
}

function noteOf(body: WireBody | null): string | null {
  if (body === null) return null;
  return body.tooLarge ? 'too-large' : body.unparsable ? 'unparsable' : body.unshaped ? 'unshaped' : null;
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

/**
 * Folds the observations of a batch by the aggregate key, so one INSERT … ON CONFLICT never
 * touches a row twice, and sorts them so concurrent batches lock rows in the same order.
 */
export function aggregateObservations(observations: readonly WireObservation[]): AggregatedRow[] {
  const rows = new Map<string, AggregatedRow>();
  for (const o of observations) {
    const req = o.request;
    const res = o.response;
    // NUL cannot occur in a validated method, path, media type or fingerprint; ' ' stands for "none" as in the index.
    const key = `${o.method}\u0000${o.path}\u0000${o.status}\u0000${req?.contentType ?? ' '}\u0000${req?.shape ?? ' '}\u0000${res?.contentType ?? ' '}\u0000${res?.shape ?? ' '}`;
    const before = rows.get(key);
    if (before === undefined) {
      rows.set(key, {
        method: o.method,
        path: o.path,
        status: o.status,
        req_ct: req?.contentType ?? null,
        req_fp: req?.shape ?? null,
        req_note: noteOf(req),
        res_ct: res?.contentType ?? null,
        res_fp: res?.shape ?? null,
        res_note: noteOf(res),
        query: o.query,
        req_h: o.requestHeaders,
        res_h: o.responseHeaders,
        count: o.count,
        first_seen: o.firstSeen,
        last_seen: o.lastSeen,
      });
      continue;
    }
    before.count += o.count;
    before.query = union(before.query, o.query);
    before.req_h = union(before.req_h, o.requestHeaders);
    before.res_h = union(before.res_h, o.responseHeaders);
    before.req_note = noteOf(req) ?? before.req_note;
    before.res_note = noteOf(res) ?? before.res_note;
    if (Date.parse(o.firstSeen) < Date.parse(before.first_seen)) before.first_seen = o.firstSeen;
    if (Date.parse(o.lastSeen) > Date.parse(before.last_seen)) before.last_seen = o.lastSeen;
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/**
 * Upserts a batch's folded rows into observations and, in the same statement, the per-endpoint
 * summaries the capture views read (capture_endpoints): interactions and count of interest are
 * added; `revision` grows by one for each endpoint that got a new observation key, which makes
 * its cached diff flag stale. Summaries are written in one fixed (method, path) order (byte order:
 * no locale-aware sort needed), so concurrent batches lock them in the same order.
 */
const UPSERT_OBSERVATIONS = `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(method text, path text, status smallint, req_ct text, req_fp text, req_note text,
                                                     res_ct text, res_fp text, res_note text, query text[], req_h text[], res_h text[],
                                                     count bigint, first_seen timestamptz, last_seen timestamptz, interest bigint)
  ), upserted AS (
    INSERT INTO observations AS o (capture_id, method, path, status, request_content_type, request_shape, request_note,
                                   response_content_type, response_shape, response_note, query, request_headers, response_headers,
                                   count, first_seen, last_seen)
    SELECT $1::uuid, r.method, r.path, r.status, r.req_ct, r.req_fp, r.req_note, r.res_ct, r.res_fp, r.res_note,
           r.query, r.req_h, r.res_h, r.count, r.first_seen, r.last_seen
      FROM input r
    ON CONFLICT (capture_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                 (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')))
    DO UPDATE SET
      count = o.count + EXCLUDED.count,
      first_seen = least(o.first_seen, EXCLUDED.first_seen),
      last_seen = greatest(o.last_seen, EXCLUDED.last_seen),
      request_note = coalesce(EXCLUDED.request_note, o.request_note),
      response_note = coalesce(EXCLUDED.response_note, o.response_note),
      query = CASE WHEN EXCLUDED.query <@ o.query THEN o.query ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.query || EXCLUDED.query) x ORDER BY x) END,
      request_headers = CASE WHEN EXCLUDED.request_headers <@ o.request_headers THEN o.request_headers
                        ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.request_headers || EXCLUDED.request_headers) x ORDER BY x) END,
      response_headers = CASE WHEN EXCLUDED.response_headers <@ o.response_headers THEN o.response_headers
                         ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.response_headers || EXCLUDED.response_headers) x ORDER BY x) END
    RETURNING o.method, o.path, (o.xmax = 0) AS inserted
  ), new_keys AS (
    SELECT method, path, bool_or(inserted) AS fresh FROM upserted GROUP BY method, path
  )
  INSERT INTO capture_endpoints AS ce (capture_id, method, path, interactions, interest, revision)
  SELECT $1::uuid, t.method, t.path, t.interactions, t.interest, CASE WHEN k.fresh THEN 1 ELSE 0 END
    FROM (SELECT method, path, sum(count) AS interactions, sum(interest) AS interest FROM input GROUP BY method, path) t
    JOIN new_keys k ON k.method = t.method AND k.path = t.path
   ORDER BY t.method COLLATE "C", t.path COLLATE "C"
  ON CONFLICT (capture_id, method, path) DO UPDATE SET
    interactions = ce.interactions + EXCLUDED.interactions,
    interest = ce.interest + EXCLUDED.interest,
    revision = ce.revision + EXCLUDED.revision`;

/** The rows of a batch as UPSERT_OBSERVATIONS reads them: each with its count of interest. */
function upsertPayload(rows: readonly AggregatedRow[]): string {
  return JSON.stringify(
    rows.map((row) => ({
      ...row,
      interest: countOfInterest({
        request: row.req_ct === null ? null : { contentType: row.req_ct },
        response: row.res_ct === null ? null : { contentType: row.res_ct },
        count: row.count,
      }),
    })),
  );
}

// PostgreSQL errors worth one more try: serialization failure, deadlock.
const RETRYABLE = new Set(['40001', '40P01']);

/** Evidence in: agents, captures and batches of observations, each batch in one transaction. */
@Injectable()
export class IngestService {
  /** Fingerprints known to be stored (shapes are never deleted, so this only saves queries). */
  private readonly storedShapes = new LruCache<string, true>(100_000);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly projects: ProjectsService,
    private readonly endpoints: EndpointsService,
    private readonly events: EventsService,
    private readonly metrics: MetricsService,
    private readonly evidence: EvidenceService,
  ) {}

  /**
   * Opens a session from a hello: checks the protocol and the token's environments, records the
   * agent and its current capture, and answers with the documented templates.
   * @throws FatalWireError when the agent must not go on.
   */
  async hello(principal: Principal, message: HelloMessage): Promise<{ session: AgentSession; welcome: WelcomeMessage }> {
    if (message.protocol !== PROTOCOL_VERSION) throw new FatalWireError(`protocol ${message.protocol} is not supported (this backend speaks ${PROTOCOL_VERSION})`);
    if (principal.projectId === null) throw new FatalWireError('an agent token belongs to a project');
    const allowed: EnvironmentKind[] | null = principal.environments;
    if (allowed !== null && !allowed.includes(message.environment.kind)) {
      throw new FatalWireError(`environment.kind ${message.environment.kind} is not allowed for this token (allowed: ${allowed.join(', ')})`);
    }
    const project = await this.projects.byId(principal.projectId);
    const [agent] = (await this.db.query(
      `INSERT INTO agents (project_id, agent_key, token_id, agent_version, environment_kind)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT ON CONSTRAINT agents_key_unique
       DO UPDATE SET token_id = EXCLUDED.token_id, agent_version = EXCLUDED.agent_version,
                     environment_kind = EXCLUDED.environment_kind, last_seen_at = now()
       RETURNING id`,
      [project.id, message.agentId, principal.tokenId, message.agentVersion, message.environment.kind],
    )) as Array<{ id: string }>;
    if (!agent) throw new Error('agent upsert returned nothing');
    const session: AgentSession = {
      projectId: project.id,
      projectSlug: project.slug,
      agentRowId: agent.id,
      environment: message.environment,
      rules: message.rules,
      knownCaptures: new Set(),
    };
    await this.startCapture(session, message.capture);
    const welcome: WelcomeMessage = { type: 'welcome', protocol: PROTOCOL_VERSION, project: project.slug, templates: await this.endpoints.templates(project.id) };
    return { session, welcome };
  }

  /** Records a capture (idempotent by its id) and tells dashboards when it is new. */
  async startCapture(session: AgentSession, capture: WireCapture, previous?: { id: string; endedAt: string }): Promise<void> {
    if (previous) await this.endCapture(session, previous.id, previous.endedAt);
    const env = session.environment;
    const rows = (await this.db.query(
      `INSERT INTO captures (id, project_id, agent_id, environment_kind, environment_name, pull_request, commit, build, reason, started_at, rules)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (id) DO UPDATE SET rules = EXCLUDED.rules, agent_id = EXCLUDED.agent_id
         WHERE captures.project_id = EXCLUDED.project_id
       RETURNING (xmax = 0) AS created`,
      [capture.id, session.projectId, session.agentRowId, env.kind, environmentName(env), env.pullRequest ?? null, env.commit ?? null, env.build ?? null, capture.reason, capture.startedAt, session.rules],
    )) as Array<{ created: boolean }>;
    const row = rows[0];
    if (!row) throw new WireError(`capture.id ${capture.id} belongs to another project`);
    session.knownCaptures.add(capture.id);
    if (row.created) {
      this.metrics.capturesStarted.inc();
      await this.events.publish(session.projectId, {
        type: 'capture.started',
        captureId: capture.id,
        environment: { kind: env.kind, name: environmentName(env) },
        startedAt: new Date(capture.startedAt).toISOString(),
      });
    }
  }

  async endCapture(session: AgentSession, captureId: string, endedAt: string): Promise<void> {
    await this.ensureCapture(session, captureId, 'captureId');
    await this.db.query('UPDATE captures SET ended_at = $3 WHERE id = $1 AND project_id = $2 AND ended_at IS NULL', [captureId, session.projectId, endedAt]);
    this.events.captureChanged(session.projectId, captureId);
  }

  /** New rules in effect: later captures of this connection get them too. */
  async updateRules(session: AgentSession, captureId: string, rules: string[]): Promise<void> {
    await this.ensureCapture(session, captureId, 'captureId');
    session.rules = rules;
    await this.db.query('UPDATE captures SET rules = $3 WHERE id = $1 AND project_id = $2', [captureId, session.projectId, rules]);
    this.events.captureChanged(session.projectId, captureId);
  }

  /**
   * Commits one batch in one transaction. A batch id already committed is reported as a
   * duplicate and nothing is counted again.
   * @throws WireError naming the problem; nothing is written then.
   */
  async ingestBatch(session: AgentSession, batch: BatchMessage): Promise<{ duplicate: boolean }> {
    await this.ensureCapture(session, batch.captureId, 'captureId');
    for (const [key, shape] of Object.entries(batch.shapes)) {
      if (this.storedShapes.get(key)) continue;
      let actual: string;
      try {
        actual = fingerprint(shape);
      } catch {
        throw new WireError(`shapes[${JSON.stringify(key)}] is not a valid shape`);
      }
      // Shapes are content-addressed: a mismatch would poison every later reader of the key.
      if (actual !== key) throw new WireError(`shapes[${JSON.stringify(key)}] does not match its fingerprint`);
    }
    await this.ensureShapesKnown(batch);
    const rows = aggregateObservations(batch.observations);
    const shapeEntries = Object.entries(batch.shapes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const duplicate = await this.withRetry(() =>
      this.db.transaction(async (manager: EntityManager) => {
        const claimed = (await manager.query(
          `INSERT INTO processed_batches (batch_id, project_id, capture_id, observations) VALUES ($1, $2, $3, $4)
           ON CONFLICT (batch_id) DO NOTHING RETURNING batch_id`,
          [batch.batchId, session.projectId, batch.captureId, batch.observations.length],
        )) as unknown[];
        if (claimed.length === 0) return true;
        if (shapeEntries.length > 0) {
          await manager.query(
            `INSERT INTO shapes (fingerprint, shape)
             SELECT s.key, s.value FROM jsonb_each($1::jsonb) AS s ORDER BY s.key
             ON CONFLICT (fingerprint) DO NOTHING`,
            [JSON.stringify(Object.fromEntries(shapeEntries))],
          );
        }
        if (rows.length > 0) await manager.query(UPSERT_OBSERVATIONS, [batch.captureId, upsertPayload(rows)]);
        // Evidence (matrix cells, proposal steps, transitions) is as durable as the batch: same transaction.
        await this.evidence.recordBatch(manager, { id: session.projectId, slug: session.projectSlug }, session.environment, rows);
        return false;
      }),
    );
    for (const [key] of shapeEntries) this.storedShapes.set(key, true);
    if (duplicate) this.metrics.duplicateBatches.inc();
    else {
      this.metrics.batches.inc();
      this.metrics.observations.inc(batch.observations.length);
      this.events.captureChanged(session.projectId, batch.captureId);
    }
    return { duplicate };
  }

  private async ensureCapture(session: AgentSession, captureId: string, field: string): Promise<void> {
    if (session.knownCaptures.has(captureId)) return;
    const found = (await this.db.query('SELECT 1 FROM captures WHERE id = $1 AND project_id = $2', [captureId, session.projectId])) as unknown[];
    if (found.length === 0) throw new WireError(`${field} ${captureId} is not a capture of this project (send hello or capture first)`);
    session.knownCaptures.add(captureId);
  }

  /** Every fingerprint an observation references must be in the batch or already stored. */
  private async ensureShapesKnown(batch: BatchMessage): Promise<void> {
    const firstUse = new Map<string, string>();
    batch.observations.forEach((o, i) => {
      for (const [side, body] of [['request', o.request], ['response', o.response]] as const) {
        const fp = body?.shape;
        if (fp !== undefined && !(fp in batch.shapes) && !this.storedShapes.get(fp) && !firstUse.has(fp)) firstUse.set(fp, `observations[${i}].${side}.shape`);
      }
    });
    if (firstUse.size === 0) return;
    const stored = (await this.db.query('SELECT fingerprint FROM shapes WHERE fingerprint = ANY($1::text[])', [[...firstUse.keys()]])) as Array<{ fingerprint: string }>;
    for (const { fingerprint: fp } of stored) {
      this.storedShapes.set(fp, true);
      firstUse.delete(fp);
    }
    const [fp, where] = firstUse.entries().next().value ?? [];
    if (fp !== undefined) throw new WireError(`${where} ${fp} is an unknown shape: include it in shapes`);
  }

  private async withRetry<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        const code = (error as { code?: string; driverError?: { code?: string } }).driverError?.code ?? (error as { code?: string }).code;
        if (attempt >= 3 || code === undefined || !RETRYABLE.has(code)) throw error;
      }
    }
  }
}
