import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type AgentEnvironment,
  type AgentMessage,
  type BatchMessage,
  type EnvironmentKind,
  fingerprint,
  bestTemplate,
  pathDigest,
  type HelloMessage,
  type LearnedMessage,
  PROTOCOL_VERSION,
  type WelcomeMessage,
  type WireBody,
  type WireCapture,
  type WireObservation,
  sameRoute,
  addInstanceExtras,
  REQUIRED_INSTANCES,
} from '@spectator/shared';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { AgentsService } from '../agents/agents.service';
import type { Principal } from '../auth/tokens.service';
import { assertUnreachable } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { PeriodicJob } from '../common/periodic';
import { withRetry } from '../common/retry';
import { connectDataSource, createDataSource, openConnections } from '../database/data-source';
import { EndpointsService } from '../endpoints/endpoints.service';
import { EventsService } from '../events/events.service';
import { environmentRowOf, pullRequestRowName } from '../evidence/environment-row';
import { EvidenceService } from '../evidence/evidence.service';
import { RegroupService } from '../paths/regroup.service';
import { MetricsService } from '../health/metrics.service';
import { ProjectsService } from '../projects/projects.service';
import { RUNTIME, type Runtime } from '../config/runtime';
import { packedRuntimeMinutes } from '../runtime/runtime.service';
import { packedConsumerDays } from '../consumers/consumers.service';
import {
  type AggregatedRow,
  type BatchHeader,
  responseHeaderNames,
  batchPart,
  type BatchPart,
} from '../captures/batch-statement';
import { CapturesRepository } from '../captures/captures.repository';
import { BatchWriter, WRITERS } from './batch-writer';
import { EvidenceFolder } from './evidence-folder';
import { IngestRepository, type KnownTemplate } from './ingest.repository';
import { MAX_PATCHED_AGE_SECONDS } from '../views/view-cache';
import { WireError } from './wire-validation';

/** What a connection knows after its hello. */
export interface AgentSession {
  projectId: string;
  projectSlug: string;
  agentRowId: string;
  environment: AgentEnvironment;
  rules: string[];
  /** Captures already checked as this connection's own (its agent and environment). */
  knownCaptures: Set<string>;
  /** Per capture, the templates its agent learned (`learned` messages), as read or written by this connection. */
  learned: Map<string, LearnedTemplate[]>;
}

/** A template an agent learned for a capture, with the digests of the literal paths it covers (null: every one). */
interface LearnedTemplate {
  template: string;
  covers: Set<string> | null;
}

/** A batch made into its statement's parameters, with what its write needs besides (see `ingestBatch`). */
interface BatchStatement {
  part: BatchPart;
  captureId: string;
  /** Observations as sent. */
  observations: number;
  /** Fingerprints of the shapes it sends, stored once the statement commits. */
  shapes: string[];
  /** The environment row its evidence is queued for (null: it is no evidence). */
  rowId: string | null;
}

/** Learned templates kept per capture at most; past it a `learned` message is refused. */
export const MAX_LEARNED_PER_CAPTURE = 10_000;

/**
 * The captures a message acts on other than one it opens, each checked against the connection
 * before the message is handled. Exhaustive, so a new message type must say what it touches.
 */
export function capturesNamedBy(message: Exclude<AgentMessage, HelloMessage>): string[] {
  switch (message.type) {
    case 'batch':
    case 'rules':
    case 'capture-end':
    case 'learned':
      return [message.captureId];
    case 'capture':
      // The capture it opens is bound by startCapture's upsert; the one it ends must be ours.
      return message.previous ? [message.previous.id] : [];
    default:
      return assertUnreachable(message);
  }
}

/** A fatal problem: the connection is closed after the error reply. */
export class FatalWireError extends WireError {}

function notOurs(captureId: string): FatalWireError {
  return new FatalWireError(`captureId ${captureId} belongs to another agent or environment`);
}

/**
 * Whether a capture's end hurries its row's fold (begins it at once instead of GATHER_MS after its
 * batches): a CI run's does, since the agent stops on `capture-ended` and the CI gate then reads
 * the pull request's matrix, origins and runtime at once. Every batch is acknowledged at its
 * commit (durable and deduplicated on resend; the fold that began with the commit, or the sweep,
 * folds it), so acks never wait for a row's folds (issue 20); `capture-ended` waits for the folds
 * of every batch its row queued before it (`endedFolds`), whichever replica makes them.
 */
export function endHurriesFold(environment: AgentEnvironment): boolean {
  return environment.kind === 'ci';
}

/** The display name of an environment: CI runs by pull request, the others by kind. */
export function environmentName(environment: AgentEnvironment): string {
  if (environment.kind === 'ci' && environment.pullRequest) return pullRequestRowName(environment.pullRequest);
  return environment.kind;
}

function noteOf(body: WireBody | null): string | null {
  if (body === null) return null;
  return body.tooLarge ? 'too-large' : body.unparsable ? 'unparsable' : body.unshaped ? 'unshaped' : null;
}

/** A row's instance extras with another exchange's (`WireBody.instances`), none once the row counts four exchanges. */
function addedExtras(before: string | null | undefined, extras: string | undefined, count: number): string | null {
  if (count >= REQUIRED_INSTANCES) return null;
  const sum = addInstanceExtras(before ?? '', extras ?? '');
  return sum === '' ? null : sum;
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
        res_h: responseHeaderNames(o),
        count: o.count,
        first_seen: o.firstSeen,
        last_seen: o.lastSeen,
        req_inst: o.count < REQUIRED_INSTANCES ? (req?.instances ?? null) : null,
        res_inst: o.count < REQUIRED_INSTANCES ? (res?.instances ?? null) : null,
      });
      continue;
    }
    before.count += o.count;
    before.req_inst = addedExtras(before.req_inst, req?.instances, before.count);
    before.res_inst = addedExtras(before.res_inst, res?.instances, before.count);
    before.query = union(before.query, o.query);
    before.req_h = union(before.req_h, o.requestHeaders);
    before.res_h = union(before.res_h, responseHeaderNames(o));
    before.req_note = noteOf(req) ?? before.req_note;
    before.res_note = noteOf(res) ?? before.res_note;
    if (Date.parse(o.firstSeen) < Date.parse(before.first_seen)) before.first_seen = o.firstSeen;
    if (Date.parse(o.lastSeen) > Date.parse(before.last_seen)) before.last_seen = o.lastSeen;
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** How often each replica prunes old batch ids (deleting is idempotent: replicas need no coordination). */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** Batch ids deleted (or their keys forgotten) per statement, so a large backlog never makes one long transaction. */
const PRUNE_CHUNK = 10_000;
/** How often each replica forgets the touched keys of batch ids no kept view reads any more (idempotent too). */
const FORGET_INTERVAL_MS = 10 * 60 * 1000;
/**
 * How long a batch id keeps the keys its batch touched: a kept capture view older than
 * MAX_PATCHED_AGE_SECONDS is computed again in full, never patched from them, and ten minutes
 * more cover a batch whose transaction began (`committed_at`) well before it committed. A view
 * that still meets forgotten keys reads them as unknown and is computed in full: exact either way.
 */
export const TOUCHED_KEYS_SECONDS = MAX_PATCHED_AGE_SECONDS + 10 * 60;
/**
 * How far past TOUCHED_KEYS_SECONDS a replica's runs look back: its first run a day (batches
 * committed while no replica ran the job), the later ones three intervals (runs overlap).
 */
const FORGET_FIRST_LOOKBACK_SECONDS = 24 * 60 * 60;
const FORGET_LOOKBACK_SECONDS = (3 * FORGET_INTERVAL_MS) / 1000;

/**
 * How long a replica matches batches' literal paths against a project's path hints and documented
 * paths as read, before reading them again (ms). A hint added or a documentation commit on any
 * replica forgets them at once on every replica with an agent of the project connected (its event);
 * the bound covers a replica that missed the event. A batch read earlier than that is stored as
 * one read just before the hint was added (its rows stay literal unless regrouped), as when a
 * batch's read of them preceded its commit by its wait for a connection. Past the bound the read
 * is made again in the background and batches use the one before until it comes (so a batch may
 * use a read KNOWN_TEMPLATES_MS plus one read's time old); only a project's first read, and the
 * first after an event or a failed read, is waited for (see `knownTemplates`).
 */
export const KNOWN_TEMPLATES_MS = 1_000;

/** A project's path hints and documented paths as read (see `knownTemplates`). */
interface KnownRead {
  /** Until when (`performance.now()`) they are used without reading them again. */
  until: number;
  templates: Promise<KnownTemplate[]>;
  /** Whether a read to replace this one is under way. */
  refreshing: boolean;
}

/** Evidence in: agents, captures and batches of observations, each batch in one transaction. */
@Injectable()
export class IngestService implements OnModuleInit, OnModuleDestroy {
  /** Fingerprints known to be stored (shapes are never deleted, so this only saves queries). */
  private readonly storedShapes = new LruCache<string, true>(100_000);
  private readonly log: Logger;
  /** Writes batches, several in one statement when they wait for one (issue 20). */
  private readonly writer: BatchWriter;
  /**
   * The batch statements' own connections (WRITERS, one per statement `writer` runs at once),
   * their plans generic from the first call (session 28): on the app's pool every connection the
   * statement landed on planned it custom five times (PostgreSQL's `auto` mode) before keeping a
   * generic plan, 209 plans of 44 ms in a loaded full-size run; its generic plan reads the same
   * buffers as a custom one (`batch-cpu.bench.ts`, BATCH_CPU_EXPLAIN). The app's reads keep `auto`.
   */
  private readonly writers: DataSource;
  private readonly pruning: PeriodicJob;
  private readonly forgetting: PeriodicJob;
  /** Whether this replica's forgetting ran once (its first run looks back further). */
  private forgotOnce = false;
  /** Per project, its path hints and documented paths as read (one read shared by concurrent batches) and until when they are used. */
  private readonly known = new LruCache<string, KnownRead>(10_000);

  constructor(
    private readonly ingest: IngestRepository,
    private readonly agents: AgentsService,
    private readonly captures: CapturesRepository,
    private readonly projects: ProjectsService,
    private readonly endpoints: EndpointsService,
    private readonly events: EventsService,
    private readonly metrics: MetricsService,
    private readonly evidence: EvidenceService,
    private readonly regrouping: RegroupService,
    private readonly folder: EvidenceFolder,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'ingest' });
    this.writers = createDataSource(runtime.databaseUrl, {
      poolSize: WRITERS,
      applicationName: 'spectator-backend-writers',
      idleSeconds: runtime.config.databaseIdleSeconds,
      planCacheMode: 'force_generic_plan',
    });
    this.writer = new BatchWriter((parts) => withRetry(() => this.captures.writeBatches(parts, this.writers)));
    this.pruning = new PeriodicJob('pruning old batch ids', PRUNE_INTERVAL_MS, () => this.pruneBatchIds(), this.log);
    this.forgetting = new PeriodicJob(
      "forgetting old batches' touched keys",
      FORGET_INTERVAL_MS,
      () => this.forgetTouchedKeys(),
      this.log,
    );
  }

  /**
   * Opens the batch writers' connections, the batch statement prepared on each; prunes old batch ids
   * now (in the background) and then every hour; forgets old touched keys every ten minutes.
   */
  async onModuleInit(): Promise<void> {
    await connectDataSource(this.writers, this.runtime.databaseUrl, "the batch writers' pool");
    // Every writer's connection open, the batch statement planned on it (a statement of no batches writes nothing).
    if (this.runtime.config.openPoolsAtStart)
      await openConnections(this.writers, this.log, "the batch writers' pool", (manager) =>
        this.captures.writeBatches([], manager),
      );
    this.pruning.start();
    this.forgetting.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([this.pruning.stop(), this.forgetting.stop()]);
    // Statements running finish first (node-postgres ends a busy connection once released).
    if (this.writers.isInitialized) await this.writers.destroy();
  }

  /**
   * Forgets (sets to NULL) the touched keys of batch ids committed more than TOUCHED_KEYS_SECONDS
   * ago, a chunk at a time: what makes a batch id row about 1.3 KB is then gone, and the id, its
   * capture and transaction stay for resend deduplication until pruned (issue 20: a batch a
   * second per agent, kept 30 days). @returns how many batch ids' keys were forgotten.
   */
  async forgetTouchedKeys(): Promise<number> {
    const lookback = this.forgotOnce ? FORGET_LOOKBACK_SECONDS : FORGET_FIRST_LOOKBACK_SECONDS;
    let total = 0;
    while (!this.forgetting.isStopped) {
      const forgotten = await this.ingest.forgetTouchedKeys(TOUCHED_KEYS_SECONDS, lookback, PRUNE_CHUNK);
      total += forgotten;
      if (forgotten < PRUNE_CHUNK) break;
    }
    this.forgotOnce = true;
    return total;
  }

  /**
   * Deletes committed batch ids older than `batchRetentionDays`, a chunk at a time. A batch resent
   * after that would be counted again; agents resend only what their spool still holds.
   * @returns how many ids were deleted.
   */
  async pruneBatchIds(): Promise<number> {
    let total = 0;
    while (!this.pruning.isStopped) {
      const deleted = await this.ingest.pruneBatchIds(this.runtime.config.batchRetentionDays, PRUNE_CHUNK);
      total += deleted;
      if (deleted < PRUNE_CHUNK) break;
    }
    if (total > 0)
      this.log.info({ deleted: total, retentionDays: this.runtime.config.batchRetentionDays }, 'pruned old batch ids');
    return total;
  }

  /**
   * Opens a session from a hello: checks the protocol and the token's environments, records the
   * agent and its current capture, and answers with the documented templates.
   * @throws FatalWireError when the agent must not go on.
   */
  async hello(
    principal: Principal,
    message: HelloMessage,
  ): Promise<{ session: AgentSession; welcome: WelcomeMessage }> {
    if (message.protocol !== PROTOCOL_VERSION)
      throw new FatalWireError(
        `protocol ${message.protocol} is not supported (this backend speaks ${PROTOCOL_VERSION})`,
      );
    if (principal.projectId === null) throw new FatalWireError('an agent token belongs to a project');
    const allowed: EnvironmentKind[] | null = principal.environments;
    if (allowed !== null && !allowed.includes(message.environment.kind)) {
      throw new FatalWireError(
        `environment.kind ${message.environment.kind} is not allowed for this token (allowed: ${allowed.join(', ')})`,
      );
    }
    const project = await this.projects.byId(principal.projectId);
    // An agent key already in use is taken over only by a token that may report that agent's
    // environment: a CI token cannot become the production agent (and so reach its captures).
    const agent = await this.agents.claim(
      {
        projectId: project.id,
        agentKey: message.agentId,
        tokenId: principal.tokenId,
        version: message.agentVersion,
        environmentKind: message.environment.kind,
      },
      allowed,
    );
    if ('heldBy' in agent)
      throw new FatalWireError(
        `agentId ${message.agentId} is an agent of environment ${agent.heldBy ?? 'unknown'}, which this token may not report`,
      );
    const session: AgentSession = {
      projectId: project.id,
      projectSlug: project.slug,
      agentRowId: agent.id,
      environment: message.environment,
      rules: message.rules,
      knownCaptures: new Set(),
      learned: new Map(),
    };
    await this.startCapture(session, message.capture);
    const welcome: WelcomeMessage = {
      type: 'welcome',
      protocol: PROTOCOL_VERSION,
      project: project.slug,
      templates: await this.templates(project.id),
    };
    return { session, welcome };
  }

  /** The templates agents of a project match first (documented, then hinted), as `welcome` sends them. */
  templates(projectId: string): Promise<string[]> {
    return this.endpoints.templates(projectId);
  }

  /**
   * Records a capture (idempotent by its id) and tells dashboards when it is new. An id already
   * recorded is resumed only by the agent and environment that opened it.
   * @throws FatalWireError when the id is another agent's, environment's or project's capture.
   */
  async startCapture(
    session: AgentSession,
    capture: WireCapture,
    previous?: { id: string; endedAt: string },
  ): Promise<void> {
    if (previous) await this.endCapture(session, previous.id, previous.endedAt);
    const env = session.environment;
    const row = await this.captures.open({
      id: capture.id,
      projectId: session.projectId,
      agentId: session.agentRowId,
      environmentKind: env.kind,
      environmentName: environmentName(env),
      pullRequest: env.pullRequest ?? null,
      commit: env.commit ?? null,
      build: env.build ?? null,
      reason: capture.reason,
      startedAt: capture.startedAt,
      rules: session.rules,
    });
    if (!row) throw notOurs(capture.id);
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

  /**
   * Resolves once no batch the session's environment row queued before this call is left unfolded
   * (on any replica), or after SETTLE_MS: `capture-ended` waits for it, so an agent that stopped
   * has its evidence in. Never rejects (a failed read is logged; the evidence stays durable).
   */
  async endedFolds(session: AgentSession): Promise<void> {
    try {
      const rowId = await this.evidence.existingRowIdOf(session.projectId, session.environment);
      if (rowId === null) return;
      const project = { id: session.projectId, slug: session.projectSlug };
      if (!(await this.folder.settleEnded(project, rowId, endHurriesFold(session.environment))))
        this.metrics.captureEndsUnfolded.inc();
    } catch (error) {
      this.metrics.captureEndsUnfolded.inc();
      this.log.warn({ err: error }, "a capture's end did not wait for its evidence's fold");
    }
  }

  async endCapture(session: AgentSession, captureId: string, endedAt: string): Promise<void> {
    await this.ensureCapture(session, captureId);
    await this.captures.end(session.projectId, captureId, endedAt);
    this.events.captureChanged(session.projectId, captureId);
  }

  /** New rules in effect: later captures of this connection get them too. */
  async updateRules(session: AgentSession, captureId: string, rules: string[]): Promise<void> {
    await this.ensureCapture(session, captureId);
    session.rules = rules;
    await this.captures.setRules(session.projectId, captureId, rules);
    this.events.captureChanged(session.projectId, captureId);
  }

  /**
   * Commits one batch in one transaction. A batch id already committed is reported as a
   * duplicate and nothing is counted again. The batch's evidence (queued with it) is folded into
   * the matrix, steps and runtime figures after its commit (GATHER_MS later, with the row's other
   * batches); its ack does not wait for that (see `endHurriesFold`).
   * @throws WireError naming the problem; nothing is written then.
   */
  ingestBatch(session: AgentSession, batch: BatchMessage): Promise<{ duplicate: boolean }> {
    // Not an async function: an async function keeps its arguments for as long as it runs, and
    // this one would keep the batch's parsed objects while its statement waits for a database
    // connection and runs. Split here, the write holds the statement's parameters and a few
    // fields only, so the up to MAX_MESSAGES_HANDLED batches in flight on a replica are not
    // copied by every young-generation collection meanwhile (issue 20).
    return this.batchStatement(session, batch).then((statement) => this.writeStatement(session, statement));
  }

  /**
   * A batch checked (its capture, learned templates and shapes) and made into the batch
   * statement's parameters, with what is needed after the write.
   * @throws WireError naming the problem.
   */
  private async batchStatement(session: AgentSession, batch: BatchMessage): Promise<BatchStatement> {
    await this.ensureCapture(session, batch.captureId);
    await this.applyLearned(session, batch);
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
    // The evidence (exchanges, runtime minutes and consumer days, queued for their row) and the noise
    // counts are written by the batch statement itself: as durable as the batch, in one round trip
    // with no transaction around it, and row locks held only while PostgreSQL runs it (issue 20).
    const evidence =
      environmentRowOf(session.environment) === null
        ? null
        : await this.evidence.queuedEvidence(
            session.projectId,
            session.environment,
            rows,
            packedRuntimeMinutes(batch),
            packedConsumerDays(batch),
          );
    const unmatched = batch.unmatched;
    const header: BatchHeader = {
      batchId: batch.batchId,
      projectId: session.projectId,
      captureId: batch.captureId,
      observations: batch.observations.length,
      shapes: shapeEntries,
      maxEndpoints: this.runtime.config.maxEndpointsPerCapture,
      ...(evidence === null ? {} : { evidence }),
      ...(unmatched && (unmatched.requests > 0 || unmatched.paths > 0) ? { unmatched } : {}),
    };
    return {
      part: batchPart(header, rows),
      captureId: batch.captureId,
      observations: batch.observations.length,
      shapes: shapeEntries.map(([key]) => key),
      rowId: evidence?.rowId ?? null,
    };
  }

  /** Writes a batch's statement (see `ingestBatch`). */
  private async writeStatement(session: AgentSession, statement: BatchStatement): Promise<{ duplicate: boolean }> {
    const { part, rowId } = statement;
    const { claimed, queuedId } = await this.writer.submit(part);
    // Folded after the commit, the ack sent meanwhile (durable either way; settle never rejects).
    if (rowId !== null && queuedId !== null)
      void this.folder.settle({ id: session.projectId, slug: session.projectSlug }, rowId, queuedId);
    const duplicate = !claimed;
    for (const key of statement.shapes) this.storedShapes.set(key, true);
    if (duplicate) this.metrics.duplicateBatches.inc();
    else {
      this.metrics.batches.inc();
      this.metrics.observations.inc(statement.observations);
      this.events.captureChanged(session.projectId, statement.captureId);
    }
    return { duplicate };
  }

  /**
   * Templates the agent learned for a capture after it had sent literal paths they cover: kept for
   * the capture, so rows of batches still on their way (spooled, resent) are stored under the
   * template too. Idempotent: a template already kept is not added again.
   * @throws WireError when the capture is not this project's, or would keep too many templates.
   */
  async learn(session: AgentSession, message: LearnedMessage): Promise<void> {
    await this.ensureCapture(session, message.captureId);
    const known = await this.learnedOf(session, message.captureId);
    const byTemplate = new Map(known.map((entry) => [entry.template, entry]));
    const literals = message.literals ?? [];
    const fresh = [...message.templates, ...literals].filter((template) => !byTemplate.has(template));
    if (known.length + fresh.length > MAX_LEARNED_PER_CAPTURE)
      throw new WireError(
        `templates would make more than ${MAX_LEARNED_PER_CAPTURE} learned templates for capture ${message.captureId}`,
      );
    // What each template covers: the paths this message names, added to those named before (a
    // template named without paths covers every one, as from an agent that names none).
    const entries = message.templates.map((template) => {
      const named = message.covers?.[template];
      const before = byTemplate.get(template);
      const covers =
        named === undefined || (before !== undefined && before.covers === null)
          ? null
          : new Set([...(before?.covers ?? []), ...named]);
      return { template, covers };
    });
    // Paths users stated literal are kept as covering nothing: a row under one stays where it is.
    const kept = [...entries, ...literals.map((path) => ({ template: path, covers: new Set<string>() }))];
    await this.ingest.keepLearnedTemplates(
      session.projectId,
      message.captureId,
      kept.map((entry) => ({ template: entry.template, covers: entry.covers && [...entry.covers] })),
    );
    for (const entry of kept) {
      const before = byTemplate.get(entry.template);
      if (before === undefined) known.push(entry);
      else before.covers = entry.covers;
    }
    // Rows already stored under literal paths the templates cover are merged into them (each
    // template again on a resend: regrouping what is already regrouped finds nothing). Users' hints
    // regroup the whole project; a learned template the literal paths it covers in the capture it was learned in.
    for (const { template, covers } of entries)
      await this.regrouping.regroup(
        session.projectId,
        template,
        message.hint ? { keep: literals } : { captureId: message.captureId, ...(covers === null ? {} : { covers }) },
      );
  }

  /** The learned templates of a capture (read once per connection, then kept up to date by `learn`). */
  private async learnedOf(session: AgentSession, captureId: string): Promise<LearnedTemplate[]> {
    let learned = session.learned.get(captureId);
    if (learned === undefined) {
      learned = (await this.ingest.learnedTemplates(captureId)).map((row) => ({
        template: row.template,
        covers: row.covers === null ? null : new Set(row.covers),
      }));
      // Bounded like the connection's other per-capture state: captures change rarely.
      if (session.learned.size >= 64) session.learned.delete(session.learned.keys().next().value as string);
      session.learned.set(captureId, learned);
    }
    return learned;
  }

  /**
   * Store literal rows under the capture's learned templates that cover them (`/users/alice` →
   * `/users/{user}`), then under the project's path hints: rows an agent sent before the hint
   * reached it are stored as if it had (documented templates still win, as in `RegroupService`).
   */
  private async applyLearned(session: AgentSession, batch: BatchMessage): Promise<void> {
    const learned = await this.learnedOf(session, batch.captureId);
    if (learned.length > 0) {
      const templates = learned.map((entry) => entry.template);
      const covers = new Map(learned.map((entry) => [entry.template, entry.covers]));
      for (const observation of batch.observations) {
        const template = bestTemplate(observation.path, templates);
        if (template === undefined) continue;
        // Only a path the template covers: a sibling the agent keeps literal (`/users/me`) stays apart;
        // the same route under other parameter names (`/{id}/…`, sent before it was learned) joins it.
        const covered = covers.get(template);
        if (
          covered === null ||
          covered?.has(pathDigest(batch.captureId, observation.path)) ||
          sameRoute(template, observation.path)
        )
          observation.path = template;
      }
    }
    const literal = batch.observations.filter((observation) => !observation.path.includes('{'));
    if (literal.length === 0) return;
    const rows = await this.knownTemplates(session.projectId);
    const hints = new Set(rows.filter((row) => !row.documented).map((row) => row.template));
    if (hints.size === 0) return;
    // Documented templates first: on a tie they win, and a documented path keeps its own rows.
    const known = [...rows.filter((row) => row.documented).map((row) => row.template), ...hints];
    for (const observation of literal) {
      const template = bestTemplate(observation.path, known);
      if (template !== undefined && hints.has(template)) observation.path = template;
    }
  }

  /**
   * A project's path hints and documented paths, read at most once per KNOWN_TEMPLATES_MS (issue 20:
   * a pool query on every batch). Past it, the next batch starts a read in the background and
   * batches go on with the read before: waiting for it held every batch of the project that came
   * meanwhile (up to MAX_MESSAGES_HANDLED parsed messages a replica, each a few hundred KB of
   * objects, while the read waited for a connection of the app's pool) once a second. A failed
   * read is not kept: the next batch reads again and waits for it.
   */
  private knownTemplates(projectId: string): Promise<KnownTemplate[]> {
    const now = performance.now();
    const cached = this.known.get(projectId);
    if (cached === undefined) return this.readKnownTemplates(projectId, now).templates;
    if (cached.until <= now && !cached.refreshing) {
      cached.refreshing = true;
      const next = this.readKnownTemplates(projectId, now, cached);
      // Used once read; until then the batches keep the read before (a failed read drops both: see below).
      next.templates.then(
        () => {
          if (this.known.get(projectId) === cached) this.known.set(projectId, next);
        },
        () => undefined,
      );
    }
    return cached.templates;
  }

  /**
   * Reads a project's path hints and documented paths (kept at once when `before` is not given,
   * else by the caller once read); a failed read leaves no entry (the next batch reads again).
   */
  private readKnownTemplates(projectId: string, now: number, before?: KnownRead): KnownRead {
    const entry: KnownRead = {
      until: now + KNOWN_TEMPLATES_MS,
      templates: this.ingest.knownTemplates(projectId),
      refreshing: false,
    };
    if (before === undefined) this.known.set(projectId, entry);
    entry.templates.catch(() => {
      const current = this.known.get(projectId);
      if (current === entry || current === before) this.known.delete(projectId);
    });
    return entry;
  }

  /** A hint was added or documentation committed (an event, from any replica): the next batch reads them again. */
  forgetKnownTemplates(projectId: string): void {
    this.known.delete(projectId);
  }

  /**
   * Checks every capture a message acts on against the connection (issue 15: a token limited to
   * one environment could end, re-rule or count into another's capture by naming its id).
   * @throws WireError for a capture that does not exist; FatalWireError for another's.
   */
  async authorize(session: AgentSession, message: Exclude<AgentMessage, HelloMessage>): Promise<void> {
    for (const captureId of capturesNamedBy(message)) await this.ensureCapture(session, captureId);
  }

  /** A capture of this connection's agent and environment, checked once per connection. */
  private async ensureCapture(session: AgentSession, captureId: string): Promise<void> {
    if (session.knownCaptures.has(captureId)) return;
    const own = await this.captures.isOwnedBy(session.projectId, captureId, {
      agentId: session.agentRowId,
      environmentKind: session.environment.kind,
      environmentName: environmentName(session.environment),
    });
    if (own === null)
      throw new WireError(`captureId ${captureId} is not a capture of this project (send hello or capture first)`);
    if (!own) throw notOurs(captureId);
    session.knownCaptures.add(captureId);
  }

  /** Every fingerprint an observation references must be in the batch or already stored. */
  private async ensureShapesKnown(batch: BatchMessage): Promise<void> {
    // Where each fingerprint is first used (for the error), then only those neither sent nor known.
    const firstUse = new Map<string, string>();
    batch.observations.forEach((o, i) => {
      const request = o.request?.shape;
      if (request !== undefined && !firstUse.has(request)) firstUse.set(request, `observations[${i}].request.shape`);
      const response = o.response?.shape;
      if (response !== undefined && !firstUse.has(response))
        firstUse.set(response, `observations[${i}].response.shape`);
    });
    for (const fp of firstUse.keys())
      if (Object.hasOwn(batch.shapes, fp) || this.storedShapes.get(fp)) firstUse.delete(fp);
    if (firstUse.size === 0) return;
    for (const fp of await this.captures.storedFingerprints([...firstUse.keys()])) {
      this.storedShapes.set(fp, true);
      firstUse.delete(fp);
    }
    const [fp, where] = firstUse.entries().next().value ?? [];
    if (fp !== undefined) throw new WireError(`${where} ${fp} is an unknown shape: include it in shapes`);
  }
}
