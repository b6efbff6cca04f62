import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { Pool } from 'undici';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';
import type { ExchangeObserver } from '../observe/exchange';
import { forward, type ForwardContext } from './forward';
import { tunnelUpgrade } from './upgrade';
import { sweepArrayBuffersInPause } from './heap';
import type { UpstreamFailure } from './errors';

export interface ProxyServerOptions {
  upstream: URL;
  observer: ExchangeObserver | null;
  metrics: Metrics;
  log: Logger;
  onUpstreamFailure?: (failure: UpstreamFailure) => void;
  /** Time allowed for the upstream's response headers, ms. Default 60 s; then 504. */
  upstreamHeadersTimeoutMs?: number;
  /** Serve HTTPS with this certificate chain and key (PEM); plain HTTP without. */
  tls?: TlsCredentials;
  /** CA certificates (PEM) trusted for an https:// upstream besides the system's. */
  upstreamCa?: Buffer | string;
  /** A stream response still going on after this long is counted then, ms. Default 10 s. */
  streamRecordAfterMs?: number;
  /**
   * With `tls`: ask clients for a certificate (its subject names the consumer, `--consumer
   * cert:subject`). A client without one, or with one no CA vouches for, is served all the same:
   * the agent names consumers, it does not authenticate them.
   */
  requestClientCertificate?: boolean;
}

/** A certificate chain and its private key, PEM. */
export interface TlsCredentials {
  cert: Buffer | string;
  key: Buffer | string;
}

/**
 * Request and response heads up to this size pass (Node's and undici's default, 16 KiB, turned
 * larger ones into a 400 or a 502 the app never gave). 256 KiB is what browsers accept of a
 * response (Chromium's limit), and a bound still: a larger request head is answered 431, a larger
 * response head 502.
 */
export const MAX_HEAD_BYTES = 256 * 1024;

/** The proxy listener (where clients send their requests): a node:http server in front of one undici Pool to the upstream. */
export class ProxyServer {
  private readonly server: http.Server | https.Server;
  private readonly pool: Pool;
  private readonly tunnels = new Set<Duplex>();
  private readonly context: ForwardContext;
  private inFlight = 0;
  private idle: (() => void) | null = null;
  private readonly streamSweep: NodeJS.Timeout;

  constructor(options: ProxyServerOptions) {
    // Forwarded bodies pass through buffers that die at once: swept in the scavenge that finds them
    // dead, they do not push V8 into a mark-compact after every scavenge (heap.ts).
    sweepArrayBuffersInPause();
    // `ca` replaces Node's default trust store, so the system roots go along.
    const upstreamTls =
      options.upstreamCa === undefined ? undefined : { ca: [...tls.rootCertificates, options.upstreamCa.toString()] };
    this.pool = new Pool(options.upstream.origin, {
      // One connection per concurrent request, kept alive; no pipelining, so one slow response
      // never holds up another.
      connections: null,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      headersTimeout: options.upstreamHeadersTimeoutMs ?? 60_000,
      maxHeaderSize: MAX_HEAD_BYTES,
      // Streams (server-sent events) may be quiet for long; the client going away ends them.
      bodyTimeout: 0,
      ...(upstreamTls ? { connect: upstreamTls } : {}),
    });
    const context: ForwardContext = (this.context = {
      pool: this.pool,
      observer: options.observer,
      metrics: options.metrics,
      requests: options.metrics.counter('requests_total'),
      log: options.log,
      onUpstreamFailure: options.onUpstreamFailure ?? (() => undefined),
      onExchangeClosed: () => {
        if (--this.inFlight === 0) this.idle?.();
      },
      openStreams: new Set(),
    });
    // An event stream may stay open for hours: it is counted (and shaped from its first events)
    // once it has been open a while, so its endpoint shows up without waiting for its end.
    const recordAfterMs = options.streamRecordAfterMs ?? 10_000;
    this.streamSweep = setInterval(
      () => {
        const due = Date.now() - recordAfterMs;
        for (const stream of context.openStreams) if (stream.startedAt <= due) stream.recordSoFar();
      },
      Math.min(1_000, Math.max(10, recordAfterMs / 4)),
    );
    this.streamSweep.unref();
    const handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      this.inFlight++;
      forward(context, req, res);
    };
    this.server = options.tls
      ? https.createServer(
          {
            cert: options.tls.cert,
            key: options.tls.key,
            maxHeaderSize: MAX_HEAD_BYTES,
            ...(options.requestClientCertificate ? { requestCert: true, rejectUnauthorized: false } : {}),
          },
          handle,
        )
      : http.createServer({ maxHeaderSize: MAX_HEAD_BYTES }, handle);
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      options.metrics.inc('requests_total');
      const tunnel = tunnelUpgrade(options.upstream, req, socket, head, options.log, upstreamTls);
      this.tunnels.add(tunnel);
      tunnel.once('close', () => this.tunnels.delete(tunnel));
    });
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (err.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      if (err.code === 'HPE_HEADER_OVERFLOW') {
        socket.end(
          `HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"statusCode":431,"error":"Request Header Fields Too Large","message":"request head over ${MAX_HEAD_BYTES} bytes"}`,
        );
        return;
      }
      socket.end(
        'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"statusCode":400,"error":"Bad Request","message":"malformed HTTP request"}',
      );
    });
  }

  /** Start listening; resolves with the bound address. */
  listen(host: string, port: number): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /** Whether the proxy serves HTTPS. */
  get secure(): boolean {
    return this.server instanceof https.Server;
  }

  /**
   * Replaces the certificate and key for new connections (a rotated certificate); open
   * connections keep theirs. @throws when the pair is not a valid certificate and matching key.
   */
  setCredentials(tls: TlsCredentials): void {
    if (!(this.server instanceof https.Server)) throw new Error('the proxy serves plain HTTP');
    this.server.setSecureContext({ cert: tls.cert, key: tls.key });
  }

  /** Requests from now on are observed by `observer`, or only forwarded (`null`). */
  setObserver(observer: ExchangeObserver | null): void {
    this.context.observer = observer;
  }

  /** Requests whose response has not finished yet. */
  get inFlightCount(): number {
    return this.inFlight;
  }

  /**
   * Stop accepting, let in-flight requests finish (at most `graceMs`), then close every
   * connection, tunnel and the upstream pool.
   */
  async close(graceMs = 10_000): Promise<void> {
    clearInterval(this.streamSweep);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.server.closeAllConnections();
    for (const tunnel of this.tunnels) tunnel.destroy();
    await closed;
    await this.pool.close().catch(() => this.pool.destroy());
  }
}
