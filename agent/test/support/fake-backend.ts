import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  PROTOCOL_VERSION,
  ROUTES,
  type AgentMessage,
  type BatchMessage,
  type ErrorMessage,
  type WireObservation,
} from '@spectator/shared';

export interface FakeBackendOptions {
  token?: string;
  /** Templates sent in welcome. */
  templates?: string[];
  /** Acknowledge batches (default true). */
  ack?: boolean;
  port?: number;
}

/**
 * A real `ws` server standing in for the backend's agent stream: checks the bearer token, answers
 * hello with welcome and each batch with an ack (marking resends as duplicates), and records every
 * frame it received — raw text too, for the privacy tests. `stop()` kills it (connections cut
 * without a close handshake); `restart()` brings it back on the same port.
 */
export class FakeBackend {
  readonly frames: string[] = [];
  readonly messages: AgentMessage[] = [];
  readonly authorizations: (string | undefined)[] = [];
  private readonly committed = new Map<string, BatchMessage>();
  private server: http.Server | null = null;
  private readonly sockets = new Set<Duplex>();
  private wss: WebSocketServer | null = null;
  port = 0;
  ack: boolean;
  /** Batches answered with an error from `refuse` (kept out of `frames`, `messages` and the counts). */
  readonly refused: BatchMessage[] = [];
  /** When set, asked first for each batch received: an error to answer it with instead of an ack. */
  refuse: ((batch: BatchMessage) => ErrorMessage | null) | null = null;

  constructor(private readonly options: FakeBackendOptions = {}) {
    this.ack = options.ack ?? true;
  }

  static async start(options: FakeBackendOptions = {}): Promise<FakeBackend> {
    const backend = new FakeBackend(options);
    await backend.listen(options.port ?? 0);
    return backend;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Agent connections open now. */
  get connections(): number {
    return this.wss?.clients.size ?? 0;
  }

  private async listen(port: number): Promise<void> {
    const wss = new WebSocketServer({ noServer: true });
    const server = http.createServer((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    server.on('upgrade', (req, socket, head) => {
      // Node takes its own error listener off an upgraded socket: an agent that resets the
      // connection (it terminates on a 401) would otherwise throw read ECONNRESET in the test.
      socket.on('error', () => undefined);
      this.authorizations.push(req.headers.authorization);
      if (req.url !== ROUTES.agentStream) {
        socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      if (this.options.token !== undefined && req.headers.authorization !== `Bearer ${this.options.token}`) {
        socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    this.wss = wss;
  }

  private accept(ws: WebSocket): void {
    ws.on('error', () => undefined); // a cut connection is what the tests make happen
    ws.on('message', (data) => {
      const text = data.toString();
      const message = JSON.parse(text) as AgentMessage;
      const refusal = message.type === 'batch' ? this.refuse?.(message) : null;
      if (refusal) {
        // Answered with an error: not received, as far as the counts here go.
        this.refused.push(message as BatchMessage);
        ws.send(JSON.stringify(refusal));
        return;
      }
      this.frames.push(text);
      this.messages.push(message);
      if (message.type === 'hello')
        ws.send(
          JSON.stringify({
            type: 'welcome',
            protocol: PROTOCOL_VERSION,
            project: 'demo',
            templates: this.options.templates ?? [],
          }),
        );
      if (this.ack && (message.type === 'capture-end' || (message.type === 'capture' && message.previous)))
        ws.send(
          JSON.stringify({
            type: 'capture-ended',
            captureId: message.type === 'capture-end' ? message.captureId : message.previous!.id,
          }),
        );
      if (message.type === 'batch' && this.ack) {
        const duplicate = this.committed.has(message.batchId);
        this.committed.set(message.batchId, message);
        ws.send(JSON.stringify({ type: 'ack', batchId: message.batchId, duplicate }));
      }
    });
  }

  /** Send a message to every connected agent. */
  broadcast(message: object): void {
    for (const client of this.wss?.clients ?? []) client.send(JSON.stringify(message));
  }

  /** Every batch received, resends included. */
  batches(): BatchMessage[] {
    return this.messages.filter((m): m is BatchMessage => m.type === 'batch');
  }

  /** Every batch once, resends dropped (dedupe by batch id), as the backend must. */
  uniqueBatches(): BatchMessage[] {
    const seen = new Set<string>();
    return this.batches().filter((batch) => !seen.has(batch.batchId) && seen.add(batch.batchId) !== undefined);
  }

  /** Observations after dropping resent batches (see `uniqueBatches`). */
  observations(): (WireObservation & { captureId: string })[] {
    const out: (WireObservation & { captureId: string })[] = [];
    for (const batch of this.uniqueBatches())
      for (const observation of batch.observations) out.push({ ...observation, captureId: batch.captureId });
    return out;
  }

  /** Sum of counts over deduplicated observations matching a filter. */
  count(filter: (o: WireObservation) => boolean = () => true): number {
    return this.observations()
      .filter(filter)
      .reduce((sum, o) => sum + o.count, 0);
  }

  /** Every shape received, by fingerprint. */
  shapes(): Record<string, unknown> {
    return Object.assign({}, ...this.batches().map((b) => b.shapes)) as Record<string, unknown>;
  }

  /** Go silent without closing: stop reading from every connection (no pongs, no acks). */
  freeze(): void {
    for (const socket of this.sockets) socket.pause();
    this.ack = false;
  }

  /** Kill: cut every connection without a close handshake and stop listening. */
  async stop(): Promise<void> {
    for (const client of this.wss?.clients ?? []) client.terminate();
    this.wss?.close();
    const server = this.server;
    this.server = null;
    this.wss = null;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** Listen again on the same port. */
  async restart(): Promise<void> {
    await this.listen(this.port);
  }
}
