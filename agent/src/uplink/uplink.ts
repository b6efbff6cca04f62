import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import {
  PROTOCOL_VERSION,
  type AgentEnvironment,
  type BackendMessage,
  type BatchMessage,
  type CaptureEndMessage,
  type CaptureMessage,
  type ErrorMessage,
  type HelloMessage,
  type LearnedMessage,
  type RulesMessage,
  type Shape,
  type WireCapture,
  type WireFailure,
  type WireObservation,
  type WireUnmatched,
} from '@spectator/shared';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import type { Spool } from './spool';

type ControlMessage = CaptureMessage | CaptureEndMessage | RulesMessage | LearnedMessage;

export interface UplinkOptions {
  /** ws(s):// URL of the agent stream. */
  url: string;
  token: string;
  agentId: string;
  agentVersion: string;
  environment: AgentEnvironment;
  spool: Spool;
  log: Logger;
  metrics: Metrics;
  /** The capture and rules for each hello. */
  helloState: () => { capture: WireCapture; rules: string[] };
  /** Told the documented templates from welcome and templates messages. */
  onTemplates: (templates: string[]) => void;
  /** Told the project of each welcome (the token's). */
  onWelcome?: (project: string) => void;
  /** Ping interval; a connection without a pong by the next ping is terminated, ms. Default 15 s. */
  heartbeatMs?: number;
  /** Reconnect backoff bounds, ms (full jitter between half and all of the delay). Default 250 ms to 30 s. */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /** Batches written but not yet acknowledged on one connection at most. Default 16. */
  window?: number;
}

const HIGH_WATER_BYTES = 1024 * 1024;
const ACKED_SHAPES_MAX = 100_000;
const MAX_OUTBOX = 1_000;
const WELCOME_TIMEOUT_MS = 10_000;

/**
 * The uplink: the one WebSocket to the backend (the backend's agent stream route), hello → welcome,
 * then batches, each kept in the spool until its ack. Reconnects with jittered backoff; after a reconnect it re-announces the captures of
 * spooled batches and resends them with their original ids, so the backend can drop duplicates.
 * Nothing here is awaited by the proxy.
 */
export class Uplink {
  private socket: WebSocket | null = null;
  private ready = false;
  private generation = 0;
  private inFlight = 0;
  private attempts = 0;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private pumpTimer: NodeJS.Timeout | null = null;
  private alive = false;
  private lastProblem = '';
  /** Retryable batch errors in a row (reset by an ack): the backoff before batches are resent. */
  private retries = 0;
  /** Epoch ms before which no batch is written: the backend asked to resend later. */
  private holdUntil = 0;
  private readonly ackedShapes = new Set<string>();
  private readonly outbox: ControlMessage[] = [];
  private drainWaiters: (() => void)[] = [];
  /** Per capture whose end is spooled, the connection (`generation`) its `capture-end` went out on. */
  private readonly endsSentOn = new Map<string, number>();

  constructor(private readonly options: UplinkOptions) {}

  /** True while connected and welcomed. */
  get connected(): boolean {
    return this.ready;
  }

  start(): void {
    this.connect();
  }

  /** Spool a batch of rows (with noise counts and failures) for a capture and send it when the connection allows. */
  sendBatch(
    capture: WireCapture,
    observations: WireObservation[],
    shapes: Map<string, Shape>,
    unmatched?: WireUnmatched,
    failures?: WireFailure[],
  ): string {
    const wireShapes: Record<string, Shape> = {};
    for (const [id, shape] of shapes) if (!this.ackedShapes.has(id)) wireShapes[id] = shape;
    const batch: BatchMessage = {
      type: 'batch',
      batchId: randomUUID(),
      captureId: capture.id,
      shapes: wireShapes,
      observations,
      ...(unmatched ? { unmatched } : {}),
      ...(failures ? { failures } : {}),
    };
    this.options.spool.add(batch, capture);
    this.pump();
    return batch.batchId;
  }

  /**
   * A capture ended: its end is kept (in the spool too) and sent, now or after the next welcome,
   * and again after every reconnect until the backend answers `capture-ended` (issue 15: an end
   * answered `unavailable` was lost). `carried`: the end already travels as the `previous` of a
   * `capture` message just sent; it is only kept, and sent on its own after a reconnect.
   */
  endCapture(capture: WireCapture, endedAt: string, carried = false): void {
    this.options.spool.addEnd(capture, endedAt);
    if (carried) {
      if (this.ready) this.endsSentOn.set(capture.id, this.generation);
    } else this.sendEndsDue();
  }

  /** Send a capture, capture-end, rules or learned message now, or right after the next welcome. */
  sendControl(message: ControlMessage): void {
    if (this.ready && this.socket) {
      this.socket.send(JSON.stringify(message));
      return;
    }
    if (this.outbox.length >= MAX_OUTBOX) this.outbox.shift();
    this.outbox.push(message);
  }

  /** Resolves true once every spooled batch and capture end is acknowledged, false after `timeoutMs`. */
  waitForAcks(timeoutMs: number): Promise<boolean> {
    if (this.drained()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drainWaiters = this.drainWaiters.filter((waiter) => waiter !== done);
        resolve(false);
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.drainWaiters.push(done);
    });
  }

  /** Close the connection and stop reconnecting. */
  async close(): Promise<void> {
    this.stopped = true;
    for (const timer of [this.reconnectTimer, this.heartbeatTimer, this.pumpTimer]) if (timer) clearTimeout(timer);
    const socket = this.socket;
    this.socket = null;
    this.ready = false;
    this.options.metrics.set('backend_connected', 0);
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        socket.terminate();
        resolve();
      }, 1_000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.close(1000, 'agent shutting down');
    });
  }

  private connect(): void {
    if (this.stopped) return;
    const { log } = this.options;
    const socket = new WebSocket(this.options.url, {
      headers: { authorization: `Bearer ${this.options.token}` },
      handshakeTimeout: 10_000,
      perMessageDeflate: false,
    });
    this.socket = socket;
    this.generation++;
    this.inFlight = 0;
    socket.on('open', () => {
      const { capture, rules } = this.options.helloState();
      const hello: HelloMessage = {
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        agentId: this.options.agentId,
        agentVersion: this.options.agentVersion,
        environment: this.options.environment,
        capture,
        rules,
      };
      socket.send(JSON.stringify(hello));
      this.alive = true;
      this.startHeartbeat(socket);
      // A server that accepts the socket but never welcomes us would hold the spool forever.
      const welcomeTimer = setTimeout(() => {
        if (this.socket !== socket || this.ready) return;
        this.problem('backend did not answer hello', {});
        socket.terminate();
      }, WELCOME_TIMEOUT_MS);
      welcomeTimer.unref();
    });
    socket.on('message', (data: WebSocket.RawData) => {
      this.alive = true;
      this.receive(socket, data.toString());
    });
    socket.on('pong', () => {
      this.alive = true;
    });
    let refused = false;
    socket.on('unexpected-response', (_req, res) => {
      refused = true;
      this.problem(`backend refused the connection with HTTP ${res.statusCode}`, { status: res.statusCode });
      res.resume();
      socket.terminate();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // After a refusal, terminate() reports "closed before the connection was established": already said.
      if (refused) return;
      this.problem('backend connection failed', { code: err.code ?? err.message });
    });
    socket.on('close', (code: number, reason: Buffer) => {
      if (this.socket !== socket) return;
      // The backend says why it closed (its connection caps, an outage, a refusal): logged, retried with backoff.
      const why = reason.toString();
      if (why !== '') this.problem(`backend closed the connection: ${why}`, { code });
      else if (this.ready) log.warn({ code }, 'backend connection closed; batches are spooled until it is back');
      this.disconnected();
    });
    log.debug({ url: this.options.url }, 'connecting to backend');
  }

  private receive(socket: WebSocket, text: string): void {
    const { log, metrics, spool } = this.options;
    let message: BackendMessage;
    try {
      message = JSON.parse(text) as BackendMessage;
    } catch {
      log.warn({ bytes: text.length }, 'backend sent a frame that is not JSON; ignored');
      return;
    }
    switch (message?.type) {
      case 'welcome':
        if (message.protocol !== PROTOCOL_VERSION)
          log.warn({ backend: message.protocol, agent: PROTOCOL_VERSION }, 'backend speaks another protocol version');
        this.ready = true;
        this.attempts = 0;
        this.lastProblem = '';
        metrics.set('backend_connected', 1);
        log.info(
          { project: message.project, templates: message.templates?.length ?? 0, spooled: spool.size },
          'connected to backend',
        );
        this.options.onTemplates(Array.isArray(message.templates) ? message.templates : []);
        this.options.onWelcome?.(message.project);
        this.afterWelcome(socket);
        return;
      case 'ack': {
        const entry = spool.remove(message.batchId);
        if (!entry) return;
        if (entry.sentOn === this.generation) this.inFlight--;
        metrics.inc('batches_acked_total');
        if (this.retries > 0) log.info({ retries: this.retries }, 'backend stores batches again');
        this.retries = 0;
        if (this.ackedShapes.size > ACKED_SHAPES_MAX) this.ackedShapes.clear();
        for (const id of Object.keys(entry.batch.shapes)) this.ackedShapes.add(id);
        this.afterAck();
        return;
      }
      case 'capture-ended':
        this.endsSentOn.delete(message.captureId);
        if (spool.removeEnd(message.captureId)) {
          metrics.inc('capture_ends_acked_total');
          this.afterAck();
        }
        return;
      case 'templates':
        this.options.onTemplates(Array.isArray(message.templates) ? message.templates : []);
        return;
      case 'error':
        this.batchError(message);
        return;
      default:
        log.warn({ type: (message as { type?: unknown })?.type }, 'unknown message from backend; ignored');
    }
  }

  /**
   * An error about a batch sent on this connection: one the backend may store later (`retryable`)
   * stays in the spool and is sent again after a backoff; a refusal that can never succeed is
   * dropped, counted and logged. Errors about no batch (or one not in flight here) are only logged.
   */
  private batchError(message: ErrorMessage): void {
    const { log, metrics, spool } = this.options;
    if (message.captureId !== undefined && !message.retryable && spool.removeEnd(message.captureId)) {
      metrics.inc('capture_ends_rejected_total');
      log.error(
        { code: message.code, problem: message.message, captureId: message.captureId },
        'backend refused a capture end; it is dropped',
      );
      this.afterAck();
      return;
    }
    // A retryable error about an end: the backend closes the connection, the end is sent after the next welcome.
    const entry = message.batchId === undefined ? undefined : spool.get(message.batchId);
    if (entry === undefined || entry.sentOn !== this.generation) {
      log[message.retryable ? 'warn' : 'error'](
        { code: message.code, problem: message.message },
        'backend reported an error',
      );
      return;
    }
    this.inFlight--;
    if (message.retryable) {
      entry.sentOn = 0;
      metrics.inc('batches_retried_total');
      const delay = this.backoff(this.retries++);
      this.holdUntil = Math.max(this.holdUntil, Date.now() + delay);
      // Once per outage: every batch of it is answered so until the backend stores again.
      if (this.retries === 1)
        log.warn(
          { code: message.code, problem: message.message, retryingWithBackoff: true },
          'backend cannot store batches now; they stay spooled and are resent',
        );
      this.pump();
      return;
    }
    spool.remove(entry.batch.batchId);
    metrics.inc('batches_rejected_total');
    log.error(
      {
        code: message.code,
        problem: message.message,
        batchId: entry.batch.batchId,
        observations: entry.batch.observations.length,
      },
      'backend refused a batch; it is dropped',
    );
    this.afterAck();
  }

  private afterWelcome(socket: WebSocket): void {
    const current = this.options.helloState().capture.id;
    const announced = new Set<string>([current]);
    for (const message of this.outbox.splice(0)) {
      if (message.type === 'capture') announced.add(message.capture.id);
      socket.send(JSON.stringify(message));
    }
    // Batches of earlier captures (from before a disconnect or an agent restart) need their
    // capture known first; the backend upserts captures by id, so re-announcing is harmless.
    const announce = (capture: WireCapture): void => {
      if (announced.has(capture.id)) return;
      announced.add(capture.id);
      socket.send(JSON.stringify({ type: 'capture', capture } satisfies CaptureMessage));
    };
    for (const entry of this.options.spool.values()) announce(entry.capture);
    // Ends not acknowledged yet, each after its capture (which the backend may never have stored)
    // and after its batches (`pump`).
    for (const end of this.options.spool.ends()) announce(end.capture);
    this.pump();
  }

  /**
   * Sends the spooled capture ends not yet sent on this connection once no spooled batch, of any
   * capture, is still to send on it: the backend answers `capture-ended` once the batches its
   * environment row queued before the end are folded into its evidence, so a stopping agent's
   * traffic is in when its end is answered, an earlier capture's batches (a restart's) included.
   */
  private sendEndsDue(): void {
    const socket = this.socket;
    if (!this.ready || !socket) return;
    for (const entry of this.options.spool.values()) if (entry.sentOn !== this.generation) return;
    for (const end of this.options.spool.ends()) {
      if (this.endsSentOn.get(end.capture.id) === this.generation) continue;
      socket.send(
        JSON.stringify({
          type: 'capture-end',
          captureId: end.capture.id,
          endedAt: end.endedAt,
        } satisfies CaptureEndMessage),
      );
      this.endsSentOn.set(end.capture.id, this.generation);
    }
  }

  private drained(): boolean {
    return this.options.spool.size === 0 && this.options.spool.ends().next().done === true;
  }

  private afterAck(): void {
    if (this.drained()) {
      for (const waiter of this.drainWaiters.splice(0)) waiter();
    }
    this.pump();
  }

  /** Write spooled batches not yet sent on this connection, then the capture ends they no longer hold back. */
  private pump(): void {
    this.pumpBatches();
    this.sendEndsDue();
  }

  /** Write spooled batches not yet sent on this connection, within the window and the socket's buffer. */
  private pumpBatches(): void {
    const socket = this.socket;
    if (!this.ready || !socket) return;
    const window = this.options.window ?? 16;
    const held = this.holdUntil - Date.now();
    if (held > 0) {
      this.pumpLater(held);
      return;
    }
    for (const entry of this.options.spool.values()) {
      if (this.inFlight >= window) return;
      if (entry.sentOn === this.generation) continue;
      if (socket.bufferedAmount > HIGH_WATER_BYTES) {
        // The network is slower than we produce: try again shortly instead of buffering without bound.
        this.pumpLater(50);
        return;
      }
      socket.send(entry.text);
      entry.sentOn = this.generation;
      this.inFlight++;
      this.options.metrics.inc('batches_sent_total');
    }
  }

  private pumpLater(ms: number): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pump();
    }, ms);
  }

  /** The jittered delay before attempt `attempt` (0-based): between half and all of min·2^attempt, at most max. */
  private backoff(attempt: number): number {
    const min = this.options.backoffMinMs ?? 250;
    const max = this.options.backoffMaxMs ?? 30_000;
    const delay = Math.min(max, min * 2 ** attempt);
    return delay / 2 + Math.random() * (delay / 2);
  }

  private startHeartbeat(socket: WebSocket): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = setInterval(() => {
      if (!this.alive) {
        this.options.log.warn({}, 'backend stopped answering heartbeats; reconnecting');
        socket.terminate();
        return;
      }
      this.alive = false;
      socket.ping();
    }, this.options.heartbeatMs ?? 15_000);
    this.heartbeatTimer.unref();
  }

  private disconnected(): void {
    if (this.ready) this.options.metrics.inc('backend_connect_failures_total');
    this.ready = false;
    this.socket = null;
    this.options.metrics.set('backend_connected', 0);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    if (this.stopped) return;
    this.reconnectTimer = setTimeout(() => this.connect(), this.backoff(this.attempts++));
    this.reconnectTimer.unref();
  }

  /** Log a connection problem once per kind, not on every retry; count it every time. */
  private problem(message: string, details: object): void {
    this.options.metrics.inc('backend_connect_failures_total');
    if (message === this.lastProblem) {
      this.options.log.debug(details, message);
      return;
    }
    this.lastProblem = message;
    this.options.log.warn({ ...details, retryingWithBackoff: true }, message);
  }
}
