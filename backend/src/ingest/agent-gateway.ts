import { Inject, Injectable } from '@nestjs/common';
import { type AgentMessage, type BackendMessage, ROUTES, type StreamErrorCode } from '@spectator/shared';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { AgentsService } from '../agents/agents.service';
import { TokenWatch } from '../auth/token-watch';
import { TokensService } from '../auth/tokens.service';
import type { TokenPrincipal } from '../common/principal';
import { ensureScope } from '../auth/auth.guard';
import { type WebSocketRoute, WebSocketRouter } from '../common/websocket-router';
import { chooseProtocol, keepAlive, refuseUpgradeFor, upgradeToken } from '../common/ws-upgrade';
import { EventsService } from '../events/events.service';
import { MetricsService } from '../health/metrics.service';
import { RUNTIME, type Runtime } from '../config/runtime';
import { type AgentSession, FatalWireError, IngestService } from './ingest.service';
import { parseAgentMessage, WireError } from './wire-validation';

/** Consecutive bad messages after which an agent is disconnected (policy violation, 1008). */
export const MAX_BAD_MESSAGES = 3;
/** How long after a commit or a path hint the connected agents are sent the templates (ms): a burst of events makes one read. */
const TEMPLATES_PUSH_DELAY_MS = 100;
/** Messages queued on one connection beyond which it is closed (1013, try again later). */
const MAX_PENDING_MESSAGES = 256;
/**
 * Messages a replica handles at once, all connections together (twice the app's pool of 10: as
 * many on the database as it has connections, as many parsed and ready). The others wait as
 * their frames' bytes, unparsed: with a couple of hundred agents per replica every connection had
 * one batch parsed, its rows folded and its statement's parameters built while it waited for a
 * pool connection, ~100 batches of some 300 KB of objects that every young-generation collection
 * copied and then promoted (issue 20).
 */
export const MAX_MESSAGES_HANDLED = 20;

/** Runs work `limit` at a time, the rest in the order they came. */
export class Turns {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limit) this.running += 1;
    // A turn ending hands itself to the first waiter (`running` stays as it is).
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next === undefined) this.running -= 1;
      else next();
    }
  }
}

/** The batch id of a frame that was refused, when one can be read, so the agent can drop it. */
function aboutText(text: string): { batchId?: string } {
  const match = /"batchId"\s*:\s*"([0-9a-fA-F-]{36})"/.exec(text.slice(0, 4096));
  return match?.[1] === undefined ? {} : { batchId: match[1] };
}

/** What an error about a message names, so that the agent keeps or drops that message: its batch or ended capture. */
function aboutMessage(message: AgentMessage): { batchId?: string; captureId?: string } {
  if (message.type === 'batch') return { batchId: message.batchId };
  if (message.type === 'capture-end') return { captureId: message.captureId };
  return {};
}

/** A frame's text, read where it lies (`Buffer.from` of a Buffer would copy it first). */
function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}

/** The first 4 KiB of a frame as text (where a batch's id is), without copying the frame. */
function headOf(data: RawData): string {
  const first = Array.isArray(data) ? data[0] : data;
  if (first === undefined) return '';
  return (Buffer.isBuffer(first) ? first : Buffer.from(first)).subarray(0, 4096).toString('utf8');
}

/**
 * `WS /api/v1/agents/stream`: agent tokens only. Messages of one connection are handled one after
 * the other (a capture before its batches); each batch is acknowledged after its commit, and
 * `capture-ended` after the folds of every batch its environment row queued before the end.
 */
@Injectable()
export class AgentGateway implements WebSocketRoute {
  private readonly server: WebSocketServer;
  private readonly log: Logger;
  /** Bytes of messages read and not yet handled, all connections together (see `queue`). */
  private queuedBytes = 0;
  private readingPaused = false;
  /** Open agent connections, all projects together and per project. */
  private connections = 0;
  private readonly projectConnections = new Map<string, number>();
  /** Messages being handled, all connections together (see MAX_MESSAGES_HANDLED). */
  private readonly turns = new Turns(MAX_MESSAGES_HANDLED);

  constructor(
    private readonly tokens: TokensService,
    private readonly watch: TokenWatch,
    private readonly ingest: IngestService,
    private readonly metrics: MetricsService,
    private readonly agents: AgentsService,
    private readonly events: EventsService,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    router: WebSocketRouter,
  ) {
    // Frames up to twice the limit are read and refused politely; beyond that ws closes with 1009.
    this.server = new WebSocketServer({
      noServer: true,
      maxPayload: runtime.config.maxMessageBytes * 2,
      handleProtocols: chooseProtocol,
    });
    this.log = runtime.log.child({ module: 'agent-stream' });
    router.add(this);
  }

  matchUpgrade(pathname: string): string[] | null {
    return pathname === ROUTES.agentStream ? [] : null;
  }

  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    let principal: TokenPrincipal;
    try {
      principal = await this.tokens.authenticate(upgradeToken(request));
      ensureScope(principal, 'agent');
    } catch (error) {
      if (!refuseUpgradeFor(socket, error)) this.log.error({ err: error }, 'agent authentication failed');
      return;
    }
    this.server.handleUpgrade(request, socket, head, (ws) => {
      // First thing: a connection closed for the cap still reads frames until its close, and ws
      // reports a malformed one as an 'error' of the socket (unheard, it would end the process).
      ws.on('error', (error) => this.log.debug({ err: error }, 'agent socket error'));
      const refusal = this.overCap(principal);
      if (refusal === null) this.attach(ws, principal);
      else {
        // Closed with the reason (1013, try again later): the agent logs it and backs off.
        this.metrics.agentConnectionsRefused.inc();
        ws.close(1013, `${refusal}; retry later`);
      }
    });
  }

  /**
   * Why a new connection of this principal is one too many (`null`: it is not). Counted when a
   * connection is attached, synchronously, so concurrent upgrades cannot pass a cap together.
   */
  private overCap(principal: TokenPrincipal): string | null {
    const { maxAgentConnections, maxAgentConnectionsPerProject } = this.runtime.config;
    if (this.connections >= maxAgentConnections)
      return `too many agent connections on this backend (at most ${maxAgentConnections})`;
    if ((this.projectConnections.get(principal.projectId ?? '') ?? 0) >= maxAgentConnectionsPerProject)
      return `too many agent connections for this project (at most ${maxAgentConnectionsPerProject})`;
    return null;
  }

  /**
   * Counts a message read; past `maxQueuedBytes` every agent socket stops being read (TCP
   * backpressure: the agents' sends wait in their kernel buffers and their own bounded spools), so
   * however many agents send however much, the replica holds the bound plus at most the message
   * that crossed it and one partial frame per connection (issue 15: 150 batches of 3.9 MB on one
   * connection were all read and queued).
   */
  private queue(bytes: number): void {
    this.queuedBytes += bytes;
    this.metrics.agentQueuedBytes.inc(bytes);
    if (this.queuedBytes > this.metrics.agentQueuedBytesMax.current)
      this.metrics.agentQueuedBytesMax.inc(this.queuedBytes - this.metrics.agentQueuedBytesMax.current);
    if (this.readingPaused || this.queuedBytes <= this.runtime.config.maxQueuedBytes) return;
    this.readingPaused = true;
    this.metrics.agentReadsPaused.inc();
    this.log.warn(
      { queuedBytes: this.queuedBytes, maxQueuedBytes: this.runtime.config.maxQueuedBytes },
      'agent messages queued over the bound: reading paused',
    );
    for (const client of this.server.clients) client.pause();
  }

  /** A message handled: reading resumes once the queue is down to half the bound. */
  private dequeue(bytes: number): void {
    this.queuedBytes -= bytes;
    this.metrics.agentQueuedBytes.dec(bytes);
    if (!this.readingPaused || this.queuedBytes > this.runtime.config.maxQueuedBytes / 2) return;
    this.readingPaused = false;
    for (const client of this.server.clients) client.resume();
  }

  private attach(ws: WebSocket, principal: TokenPrincipal): void {
    this.metrics.agentConnections.inc();
    const project = principal.projectId ?? '';
    this.connections += 1;
    this.projectConnections.set(project, (this.projectConnections.get(project) ?? 0) + 1);
    if (this.readingPaused) ws.pause();
    this.watch.closeWhenTokenEnds(ws, principal.tokenId);
    const stopHeartbeat = keepAlive(ws);
    const presence = this.agents.presence();
    let session: AgentSession | null = null;
    let badMessages = 0;
    let pending = 0;
    let chain = Promise.resolve();
    const send = (message: BackendMessage): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    // `capture-ended` waits for its row's folds (at most SETTLE_MS), the connection's next messages
    // do not: answers of acked kinds go out in the order of their messages, each once `after` resolved.
    let answers = Promise.resolve();
    const answer = (message: BackendMessage, after: Promise<void> = Promise.resolve(), sending?: () => void): void => {
      answers = answers
        .then(() => after)
        .then(() => {
          sending?.();
          send(message);
        });
    };
    // Templates the agent matches first change with documentation commits and path hints (on any
    // replica): the connected agent gets them at once (one read per burst of events), not only at its next hello.
    let stopTemplates = (): void => undefined;
    let templatesDue: NodeJS.Timeout | null = null;
    const followTemplates = (opened: AgentSession): void => {
      stopTemplates();
      const unsubscribe = this.events.subscribe(opened.projectId, (event) => {
        if (event.type !== 'paths.hinted' && event.type !== 'documentation.committed') return;
        this.ingest.forgetKnownTemplates(opened.projectId);
        if (templatesDue !== null) return;
        templatesDue = setTimeout(() => {
          templatesDue = null;
          this.ingest.templates(opened.projectId).then(
            (templates) => send({ type: 'templates', templates }),
            (error: unknown) => this.log.warn({ err: error }, 'templates not sent to agent'),
          );
        }, TEMPLATES_PUSH_DELAY_MS);
      });
      stopTemplates = () => {
        unsubscribe();
        if (templatesDue !== null) clearTimeout(templatesDue);
        templatesDue = null;
      };
    };
    // A refusal: the same message can never succeed, so the agent drops it (retryable: false).
    const reject = (
      code: Exclude<StreamErrorCode, 'unavailable'>,
      message: string,
      about: { batchId?: string; captureId?: string },
      fatal: boolean,
    ): void => {
      this.metrics.rejectedMessages.inc();
      send({ type: 'error', code, message, retryable: false, ...about });
      badMessages += 1;
      if (fatal) ws.close(1008, code);
      else if (badMessages >= MAX_BAD_MESSAGES) ws.close(1008, 'too many bad messages');
    };

    /**
     * Handles one message, its frame read at `received` (`performance.now()`). Its text is made
     * here, as a local: an async function keeps its arguments while it runs, its locals only while
     * they are used (issue 20: the 26 KB text of a batch waiting for a database connection).
     */
    const handle = async (frame: RawData, received: number): Promise<void> => {
      const started = performance.now();
      const text = textOf(frame);
      let message: AgentMessage;
      try {
        message = parseAgentMessage(text);
      } catch (error) {
        reject('invalid-message', error instanceof Error ? error.message : 'invalid message', aboutText(text), false);
        return;
      }
      // What an error about the message names, read before its work: from here on nothing but the
      // work itself refers to the parsed message, so a batch waiting for a database connection
      // holds its statement's parameters, not the objects it was parsed into (issue 20).
      const about = aboutMessage(message);
      const type = message.type;
      if (type !== 'hello' && session === null) {
        reject('hello-required', 'the first message must be hello', about, false);
        return;
      }
      try {
        // Every message but hello acts on captures of this connection's agent and environment only.
        if (message.type !== 'hello') await this.ingest.authorize(session as AgentSession, message);
        switch (message.type) {
          case 'hello': {
            const opened = await this.ingest.hello(principal, message);
            session = opened.session;
            await presence.open(session.agentRowId);
            send(opened.welcome);
            followTemplates(opened.session);
            break;
          }
          case 'batch': {
            const { batchId } = message;
            const { duplicate } = await this.ingest.ingestBatch(session as AgentSession, message);
            const committed = performance.now();
            answer({ type: 'ack', batchId, ...(duplicate ? { duplicate: true } : {}) }, undefined, () =>
              this.timed(received, started, committed),
            );
            break;
          }
          case 'capture':
            await this.ingest.startCapture(session as AgentSession, message.capture, message.previous);
            if (message.previous)
              answer(
                { type: 'capture-ended', captureId: message.previous.id },
                this.ingest.endedFolds(session as AgentSession),
              );
            break;
          case 'capture-end':
            await this.ingest.endCapture(session as AgentSession, message.captureId, message.endedAt);
            answer(
              { type: 'capture-ended', captureId: message.captureId },
              this.ingest.endedFolds(session as AgentSession),
            );
            break;
          case 'rules':
            await this.ingest.updateRules(session as AgentSession, message.captureId, message.rules);
            break;
          case 'learned':
            await this.ingest.learn(session as AgentSession, message);
            break;
        }
        badMessages = 0;
      } catch (error) {
        if (error instanceof WireError) {
          reject(
            error instanceof FatalWireError ? 'refused' : 'invalid-message',
            error.message,
            about,
            error instanceof FatalWireError,
          );
          return;
        }
        // Not the agent's fault (e.g. the database is away): the agent keeps the batch (or the
        // capture's end) and resends it.
        this.log.error({ err: error, type, ...about }, 'agent message failed');
        send({
          type: 'error',
          code: 'unavailable',
          message: 'the backend could not store this message now; resend later',
          retryable: true,
          ...about,
        });
        // A hello, capture, capture-end or rules message is not resent on this connection: it is
        // closed instead (1013, try again later), and the agent's next hello carries its current
        // capture and rules again, its spooled batches' captures re-announced before them and the
        // ends not yet acknowledged (capture-ended) sent again after them.
        if (about.batchId === undefined) ws.close(1013, 'backend unavailable; reconnect later');
      }
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      const received = performance.now();
      const size = Array.isArray(data) ? data.reduce((sum, b) => sum + b.length, 0) : data.byteLength;
      if (size > this.runtime.config.maxMessageBytes) {
        reject(
          'too-large',
          `message of ${size} bytes is over the limit of ${this.runtime.config.maxMessageBytes} bytes`,
          aboutText(headOf(data)),
          false,
        );
        return;
      }
      if (isBinary) {
        reject('invalid-message', 'messages must be JSON text frames', {}, false);
        return;
      }
      if (++pending > MAX_PENDING_MESSAGES) {
        ws.close(1013, 'too many messages in flight');
        return;
      }
      // Kept as the frame's bytes until its turn, and read as text only then: hundreds of agents'
      // messages wait here at once, and as text (26 KB strings on the V8 heap) they survived
      // every young-generation collection meanwhile and were copied into the old one (issue 20).
      this.queue(size);
      chain = chain
        .then(() => this.turns.run(() => handle(data, received)))
        .finally(() => {
          pending -= 1;
          this.dequeue(size);
        });
    });
    ws.on('close', () => {
      stopTemplates();
      stopHeartbeat();
      void presence.close();
      this.metrics.agentConnections.dec();
      this.connections -= 1;
      const left = (this.projectConnections.get(project) ?? 1) - 1;
      if (left > 0) this.projectConnections.set(project, left);
      else this.projectConnections.delete(project);
    });
  }

  /** Adds where an acknowledged batch's time went (`performance.now()` marks) to the metrics. */
  private timed(received: number, started: number, committed: number): void {
    this.metrics.batchWaitSeconds.inc((started - received) / 1000);
    this.metrics.batchCommitSeconds.inc((committed - started) / 1000);
    this.metrics.batchFoldWaitSeconds.inc((performance.now() - committed) / 1000);
    this.metrics.batchAcks.inc();
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
