import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { PROTOCOL_VERSION, type AgentEnvironment, type BackendMessage, type BatchMessage, type CaptureEndMessage, type CaptureMessage, type HelloMessage, type RulesMessage, type Shape, type WireCapture, type WireObservation } from '@spectator/shared';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import type { Spool } from './spool';

type ControlMessage = CaptureMessage | CaptureEndMessage | RulesMessage;

export interface StreamClientOptions {
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
 * The WebSocket stream to the backend: hello → welcome, then batches, each kept in the spool until
 * its ack. Reconnects with jittered backoff; after a reconnect it re-announces the captures of
 * spooled batches and resends them with their original ids, so the backend can drop duplicates.
 * Nothing here is awaited by the proxy.
 */
export class StreamClient {
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
  private readonly ackedShapes = new Set<string>();
  private readonly outbox: ControlMessage[] = [];
  private drainWaiters: (() => void)[] = [];

  constructor(private readonly options: StreamClientOptions) {}

  /** True while connected and welcomed. */
  get connected(): boolean {
    return this.ready;
  }

  start(): void {
    this.connect();
  }

  /** Spool a batch of rows for a capture and send it when the connection allows. */
  sendBatch(capture: WireCapture, observations: WireObservation[], shapes: Map<string, Shape>): string {
    const wireShapes: Record<string, Shape> = {};
    for (const [id, shape] of shapes) if (!this.ackedShapes.has(id)) wireShapes[id] = shape;
    const batch: BatchMessage = { type: 'batch', batchId: randomUUID(), captureId: capture.id, shapes: wireShapes, observations };
    this.options.spool.add(batch, capture);
    this.pump();
    return batch.batchId;
  }

  /** Send a capture, capture-end or rules message now, or right after the next welcome. */
  sendControl(message: ControlMessage): void {
    if (this.ready && this.socket) {
      this.socket.send(JSON.stringify(message));
      return;
    }
    if (this.outbox.length >= MAX_OUTBOX) this.outbox.shift();
    this.outbox.push(message);
  }

  /** Resolves true once every spooled batch is acknowledged, false after `timeoutMs`. */
  waitForAcks(timeoutMs: number): Promise<boolean> {
    if (this.options.spool.size === 0) return Promise.resolve(true);
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
    const socket = new WebSocket(this.options.url, { headers: { authorization: `Bearer ${this.options.token}` }, handshakeTimeout: 10_000, perMessageDeflate: false });
    this.socket = socket;
    this.generation++;
    this.inFlight = 0;
    socket.on('open', () => {
      const { capture, rules } = this.options.helloState();
      const hello: HelloMessage = { type: 'hello', protocol: PROTOCOL_VERSION, agentId: this.options.agentId, agentVersion: this.options.agentVersion, environment: this.options.environment, capture, rules };
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
    socket.on('close', (code: number) => {
      if (this.socket !== socket) return;
      if (this.ready) log.warn({ code }, 'backend connection closed; batches are spooled until it is back');
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
        if (message.protocol !== PROTOCOL_VERSION) log.warn({ backend: message.protocol, agent: PROTOCOL_VERSION }, 'backend speaks another protocol version');
        this.ready = true;
        this.attempts = 0;
        this.lastProblem = '';
        metrics.set('backend_connected', 1);
        log.info({ project: message.project, templates: message.templates?.length ?? 0, spooled: spool.size }, 'connected to backend');
        this.options.onTemplates(Array.isArray(message.templates) ? message.templates : []);
        this.afterWelcome(socket);
        return;
      case 'ack': {
        const entry = spool.remove(message.batchId);
        if (!entry) return;
        if (entry.sentOn === this.generation) this.inFlight--;
        metrics.inc('batches_acked_total');
        if (this.ackedShapes.size > ACKED_SHAPES_MAX) this.ackedShapes.clear();
        for (const id of Object.keys(entry.batch.shapes)) this.ackedShapes.add(id);
        this.afterAck();
        return;
      }
      case 'templates':
        this.options.onTemplates(Array.isArray(message.templates) ? message.templates : []);
        return;
      case 'error': {
        if (message.batchId) {
          const entry = spool.remove(message.batchId);
          if (entry?.sentOn === this.generation) this.inFlight--;
          metrics.inc('batches_rejected_total');
          log.error({ code: message.code, problem: message.message, batchId: message.batchId }, 'backend rejected a batch; it is dropped');
          this.afterAck();
        } else {
          log.error({ code: message.code, problem: message.message }, 'backend reported an error');
        }
        return;
      }
      default:
        log.warn({ type: (message as { type?: unknown })?.type }, 'unknown message from backend; ignored');
    }
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
    for (const entry of this.options.spool.values()) {
      if (announced.has(entry.capture.id)) continue;
      announced.add(entry.capture.id);
      socket.send(JSON.stringify({ type: 'capture', capture: entry.capture } satisfies CaptureMessage));
    }
    this.pump();
  }

  private afterAck(): void {
    if (this.options.spool.size === 0) {
      for (const waiter of this.drainWaiters.splice(0)) waiter();
    }
    this.pump();
  }

  /** Write spooled batches not yet sent on this connection, within the window and the socket's buffer. */
  private pump(): void {
    const socket = this.socket;
    if (!this.ready || !socket) return;
    const window = this.options.window ?? 16;
    for (const entry of this.options.spool.values()) {
      if (this.inFlight >= window) return;
      if (entry.sentOn === this.generation) continue;
      if (socket.bufferedAmount > HIGH_WATER_BYTES) {
        // The network is slower than we produce: try again shortly instead of buffering without bound.
        if (!this.pumpTimer) {
          this.pumpTimer = setTimeout(() => {
            this.pumpTimer = null;
            this.pump();
          }, 50);
        }
        return;
      }
      socket.send(entry.text);
      entry.sentOn = this.generation;
      this.inFlight++;
      this.options.metrics.inc('batches_sent_total');
    }
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
    const min = this.options.backoffMinMs ?? 250;
    const max = this.options.backoffMaxMs ?? 30_000;
    const delay = Math.min(max, min * 2 ** this.attempts++);
    const jittered = delay / 2 + Math.random() * (delay / 2);
    this.reconnectTimer = setTimeout(() => this.connect(), jittered);
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
