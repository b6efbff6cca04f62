import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
// The module's binding, not the global: `globalThis.performance` is a getter Node runs on every read.
import { performance } from 'node:perf_hooks';
import type { Dispatcher, Pool } from 'undici';
import type { Logger } from '../log';
import type { Counter, Metrics } from '../metrics';
import type { BodyTap, Exchange, ExchangeObserver, SampleCarrier } from '../observe/exchange';
import { clientResponseHeaders, upstreamRequestHeaders } from './headers';
import { errorCode, failureBody, upstreamFailure, type UpstreamFailure } from './errors';

/** What every forwarded request shares. */
export interface ForwardContext {
  pool: Pool;
  /** `null` when observing is off: the hot path then does nothing but forward. */
  observer: ExchangeObserver | null;
  metrics: Metrics;
  /** `requests_total`, counted on every request. */
  requests: Counter;
  log: Logger;
  /** Told about each upstream failure (the probe uses it to notice the upstream going away). */
  onUpstreamFailure(failure: UpstreamFailure): void;
  /** Told when each forwarded exchange's response has closed (finished or cut). */
  onExchangeClosed(): void;
  /** Streams (server-sent events, JSON lines) being observed whose response has not ended (no other body). */
  openStreams: Set<OpenStream>;
}

/** A stream response still going on, which the proxy may count before it ends (see `recordSoFar`). */
export interface OpenStream {
  /** Epoch ms when its response's first bytes came (when observing began to watch it). */
  readonly startedAt: number;
  /** Count the exchange now, shaped from what came so far; its end is then not counted again. */
  recordSoFar(): void;
}

/**
 * Forward one request through the pool: request body streamed up (or sent as one buffer when it
 * came whole with the headers), response streamed down with backpressure both ways, hop-by-hop
 * headers dropped, trailers relayed. The capture side only sees the chunks (it keeps them, never
 * changes them), and shapes them only after the response has ended.
 */
export function forward(context: ForwardContext, req: IncomingMessage, res: ServerResponse): void {
  context.requests.inc();
  // Timings are measured from here (the request's headers have arrived), only with observing on.
  const arrived = context.observer ? performance.now() : 0;
  const path = requestPath(req.url);
  if (path === null) {
    res.once('close', context.onExchangeClosed);
    answer(
      res,
      400,
      JSON.stringify({
        statusCode: 400,
        error: 'Bad Request',
        message: 'request target must be a path or an absolute http URL',
      }),
    );
    return;
  }
  if (!hasBody(req)) {
    dispatch(context, context.observer, req, res, path, null, null, arrived);
    return;
  }
  // Node's parser hands the request to us before it has read the body that came in the same read;
  // by the next tick that body is in the request's buffer. Looking then costs no waiting.
  process.nextTick(dispatchWithBody, context, req, res, path, arrived);
}

function dispatchWithBody(
  context: ForwardContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  arrived: number,
): void {
  const observer = context.observer;
  // Request bodies are kept before the sampling decision (it needs the status). Neither they nor
  // response bodies are copied: node:http's parser gives every request body chunk a Buffer of its
  // own, and undici's response chunks are views of a socket read that is never reused. A body that
  // came whole is kept by reference as it is: its tap is made when the pipeline accepts the exchange.
  const whole = arrivedBody(req);
  if (whole !== null) {
    dispatch(context, observer, req, res, path, null, whole, arrived);
    return;
  }
  // The request streams to the upstream as is; a body worth keeping is also watched by the tap.
  const requestTap = observer ? observer.tap(req.headers['content-type'], req.headers['content-encoding'], true) : null;
  dispatch(context, observer, req, res, path, requestTap, requestTap ? tapRequest(req, requestTap) : req, arrived);
}

function dispatch(
  context: ForwardContext,
  observer: ExchangeObserver | null,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  requestTap: BodyTap | null,
  body: Buffer | IncomingMessage | null,
  arrived: number,
): void {
  const forwarding = new ForwardHandler(context, req, res);
  // Observing wraps the forwarding handler, as undici's handler decorators (interceptors) wrap theirs:
  // it passes each callback on first and looks at what went by after. Without an observer, undici
  // calls the forwarding handler itself.
  const handler = observer
    ? new ObservingHandler(forwarding, context, observer, requestTap, body instanceof Buffer ? body : null, arrived)
    : forwarding;
  try {
    context.pool.dispatch(
      {
        path,
        method: req.method as Dispatcher.HttpMethod,
        headers: upstreamRequestHeaders(req),
        body,
        // Requests are replayed by no one: a proxy must not retry a non-idempotent request on its own.
        idempotent: false,
      },
      handler,
    );
  } catch (err) {
    // Invalid method or header values are refused by undici synchronously.
    handler.onResponseError(null, err as Error);
  }
}

/**
 * The request's whole body when all of it has already arrived, as one buffer, else `null` (it then
 * streams). Nothing waits for it: a body is taken whole only when the bytes that came with the
 * headers are all of it, as they are for the usual small JSON body. Sent as one buffer, undici
 * writes it with the headers and sets up no stream piping: 11 % less of the agent's CPU per
 * request for `POST /posts` at 1 connection, measured in one process against the streamed path.
 */
function arrivedBody(req: IncomingMessage): Buffer | null {
  const length = req.headers['content-length'];
  if (length === undefined || req.readableLength === 0 || req.readableLength !== Number(length)) return null;
  const body = req.read() as Buffer;
  // Flowing with nothing left to read, the request reaches its end as soon as the parser does.
  req.resume();
  return body;
}

/** Header objects of an exchange not recorded yet (never written to). */
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

/** What a decorating handler is told when the client's response closed (see `ForwardHandler.observing`). */
interface ClientCloseListener {
  clientClosed(finished: boolean): void;
}

/** Forwards one exchange: the upstream's answer goes to the client as it comes, with backpressure. */
class ForwardHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  /** The client went away before its response finished. */
  clientGone = false;
  /** The final status (0 until the response started). */
  status = 0;
  /** The response headers as sent to the client. */
  responseHeaders: IncomingHttpHeaders = {};
  /** The response ended whole (`onResponseEnd`). */
  ended = false;
  /** The upstream failed after the response started: it was cut, so the client sees it is incomplete. */
  cut = false;
  /** The status of the agent's own answer (502, 503, 504) when the upstream gave none; 0 otherwise. */
  answered: 0 | 502 | 503 | 504 = 0;
  /**
   * Told when the client's response closed, finished or not (node:http's `close`, which no
   * dispatcher callback carries): how a decorating handler learns the client went away. An object
   * with a method rather than a closure per exchange: with a closure stored here, every exchange
   * (its request, response and undici's request with the raw headers) outlived two scavenges and
   * went to the old generation, 1.5 KB a request at 32 connections, against 0.1 KB with this.
   */
  observing: ClientCloseListener | null = null;
  private readonly resume = (): void => this.controller?.resume();

  constructor(
    private readonly context: ForwardContext,
    readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {
    // One listener per exchange: the proxy's in-flight count, and aborting the upstream request
    // when the client went away before its response finished.
    res.once('close', () => {
      context.onExchangeClosed();
      const finished = res.writableFinished;
      if (!finished) {
        this.clientGone = true;
        this.controller?.abort(new Error('client closed the connection'));
      }
      this.observing?.clientClosed(finished);
    });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.clientGone) controller.abort(new Error('client closed the connection'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) {
      this.informational(statusCode, headers);
      return;
    }
    this.status = statusCode;
    this.responseHeaders = clientResponseHeaders(headers);
    if (headers['content-length'] !== undefined) {
      // The reason phrase as the upstream sent it, an empty one too (Node would put its own).
      this.res.writeHead(statusCode, statusMessage, this.responseHeaders);
      return;
    }
    // Neither a length nor a transfer coding: the body runs until the upstream closes (RFC 9112
    // §6.3), so it reaches the client framed the same way, not re-framed as chunks.
    if (
      headers['transfer-encoding'] === undefined &&
      statusCode !== 204 &&
      statusCode !== 304 &&
      this.req.method !== 'HEAD'
    )
      this.res.useChunkedEncodingByDefault = false;
    this.res.writeHead(statusCode, statusMessage, this.responseHeaders);
    // A response without a length may be a stream (server-sent events): its headers go out now,
    // before the first event. Others go out with the first body bytes, in one write.
    this.res.flushHeaders();
  }

  /**
   * An interim answer: `103 Early Hints` and `102 Processing` are relayed (Node writes them with its
   * own reason phrase; a 102's headers are not kept). `100 Continue` is Node's own answer to
   * `Expect`; Node has no way to write any other 1xx, so they are not relayed (docs/agent.md).
   */
  private informational(statusCode: number, headers: IncomingHttpHeaders): void {
    // An HTTP/1.0 client is sent no interim answers (RFC 9110 §15.2).
    if (this.res.headersSent || this.clientGone || this.req.httpVersionMinor === 0) return;
    if (statusCode === 102) this.res.writeProcessing();
    else if (statusCode === 103) {
      try {
        this.res.writeEarlyHints(clientResponseHeaders(headers) as Record<string, string | string[]>);
      } catch {
        // Node refuses a `Link` value it cannot validate; the hints are only hints.
      }
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', this.resume);
    }
  }

  onResponseEnd(_controller: Dispatcher.DispatchController | null, trailers: IncomingHttpHeaders): void {
    for (const _name in trailers) {
      this.res.addTrailers(trailers as Record<string, string>);
      break;
    }
    this.res.end();
    this.ended = true;
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    if (this.clientGone) return;
    // A 204 or 304 has no body whatever its Content-Length says (a 304 states the length of the
    // representation), yet undici takes the missing bytes for a mismatch: the answer is complete.
    if ((this.status === 204 || this.status === 304) && errorCode(err) === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
      this.onResponseEnd(null, {});
      return;
    }
    const failure = upstreamFailure(err);
    if (this.res.headersSent) {
      // Too late for an error answer: cut the response so the client sees it is incomplete.
      this.context.log.warn({ code: failure.code, method: this.req.method }, 'upstream failed mid-response');
      this.cut = true;
      this.res.destroy(err);
      return;
    }
    this.context.metrics.inc('upstream_errors_total');
    this.context.log.warn(
      { code: failure.code, status: failure.statusCode, method: this.req.method, reason: err.message },
      'upstream request failed',
    );
    this.context.onUpstreamFailure(failure);
    answer(this.res, failure.statusCode, failureBody(failure));
    this.answered = failure.statusCode;
  }
}

/**
 * Observing around the forwarding handler: each callback is passed on first, so nothing observing does
 * sits between the upstream's answer and the client; then the body chunks that went by are tapped
 * (kept by reference, never changed), and the exchange is handed to the observer once its response
 * ended, was cut, or the client left it.
 */
class ObservingHandler implements Dispatcher.DispatchHandler, OpenStream, ClientCloseListener, SampleCarrier, Exchange {
  private responseTap: BodyTap | null = null;
  /** A response body whole in its first chunk, kept by reference: its tap is the pipeline's to make (see `Exchange`). */
  responseBody: Buffer | null = null;
  /** The sampler's slot for this interaction's key (see `SampleCarrier`): handed back with the exchange. */
  sampleSlot: SampleCarrier['sampleSlot'] = null;
  private recorded = false;
  startedAt = 0;
  // The exchange handed to the observer is this handler itself (one object fewer a request): its
  // fields below are set when it is recorded, except `sampledBytes` (when the response starts) and
  // `firstByte` (when its status and headers come).
  captureId = '';
  method = '';
  target = '';
  status = 0;
  requestHeaders: IncomingHttpHeaders = NO_HEADERS;
  responseHeaders: IncomingHttpHeaders = NO_HEADERS;
  request: BodyTap | null = null;
  response: BodyTap | null = null;
  at = 0;
  /** Body bytes the sampler reserved shape work for; 0: not shaped (see `Exchange.sampledBytes`). */
  sampledBytes = 0;
  /** The sampling decision is the pipeline's, when it accepts the exchange (see `startTap`). */
  sampleOnRecord = false;
  /** Milliseconds from the request's arrival until the response started. */
  firstByte = 0;
  lastByte = -1;
  clientLeft = false;
  socket: object | undefined = undefined;

  constructor(
    private readonly forwarding: ForwardHandler,
    private readonly context: ForwardContext,
    /** The observer when the request arrived: a request is observed from start to end, or not at all. */
    private readonly observer: ExchangeObserver,
    /** The tap of a request body that streams; null when there is none or it came whole (`requestBody`). */
    private requestTap: BodyTap | null,
    /** A request body that came whole with the headers, kept by reference (see `Exchange.requestBody`). */
    public requestBody: Buffer | null,
    /** `performance.now()` when the request arrived. */
    private readonly arrived: number,
  ) {
    forwarding.observing = this;
  }

  /** The client's response closed (finished or not). */
  clientClosed(finished: boolean): void {
    if (!finished) {
      // A response the client left (a server-sent event stream is usually ended so) still happened;
      // one the proxy cut itself (the upstream failed mid-response) was not left by the client.
      if (this.forwarding.status !== 0) this.record(false, !this.forwarding.cut);
      // Left before any answer came: counted and timed as such.
      else this.failed(0);
    }
    // What stream taps kept of an exchange never recorded (no response came) is let go here.
    this.releaseTaps();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.forwarding.onRequestStart(controller);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.forwarding.onResponseStart(controller, statusCode, headers, statusMessage);
    if (statusCode >= 200) this.firstByte = performance.now() - this.arrived;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.forwarding.onResponseData(controller, chunk);
    const tap = this.responseTap ?? (this.responseBody === null ? this.startTap(chunk) : this.responseTapNow());
    tap?.write(chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController | null, trailers: IncomingHttpHeaders): void {
    this.forwarding.onResponseEnd(controller, trailers);
    this.record(true);
  }

  onResponseError(controller: Dispatcher.DispatchController | null, err: Error): void {
    const forwarding = this.forwarding;
    forwarding.onResponseError(controller, err);
    if (forwarding.ended) this.record(true);
    else if (forwarding.cut) this.record(false);
    else if (forwarding.answered !== 0) this.failed(forwarding.answered);
  }

  /**
   * The sampling decision and the response tap, made once the response's first bytes (`first`) are
   * on their way to the client. The tap keeps chunks by reference, so seeing a chunk after it was
   * written changes nothing. Made once: `responseTap` is set from then on. Returns the tap to write
   * `first` to, or null when `first` is the whole body: then neither is made here.
   */
  private startTap(first: Buffer): BodyTap | null {
    const { req, responseHeaders } = this.forwarding;
    const length = responseHeaders['content-length'];
    if (first.length > 0 && length !== undefined && first.length === Number(length)) {
      // The whole body is this chunk (the usual small answer): kept by reference, which costs nothing;
      // its tap and the sampling decision are left to the pipeline, made with the other exchanges of this turn.
      this.sampleOnRecord = true;
      this.responseBody = first;
      return null;
    }
    this.sampledBytes = this.observer.sample(
      req.method ?? 'GET',
      req.url ?? '/',
      this.forwarding.status,
      responseHeaders,
      this.requestTapNow()?.copied ?? 0,
      this,
    );
    // Negative: sampled out, but a small body is kept to notice a new variant (observe/novelty.ts).
    const keep = this.sampledBytes !== 0;
    // A kept body is fingerprinted (to notice a new variant): from its chunks as they come.
    this.responseTap = this.observer.tap(
      responseHeaders['content-type'],
      responseHeaders['content-encoding'],
      keep,
      keep,
    );
    // Only a stream may stay open for hours: any other body (a slow JSON download too) is counted when it ends.
    if (this.responseTap.stream) {
      this.startedAt = Date.now();
      this.context.openStreams.add(this);
    }
    return this.responseTap;
  }

  /** The request body's tap, made now from a body kept whole (`requestBody`) when it is needed before the pipeline's turn. */
  private requestTapNow(): BodyTap | null {
    const body = this.requestBody;
    if (body !== null) {
      this.requestBody = null;
      const { headers } = this.forwarding.req;
      this.requestTap = this.observer.tap(headers['content-type'], headers['content-encoding'], true);
      this.requestTap.write(body);
    }
    return this.requestTap;
  }

  /** The response body's tap, made now from a body kept whole (`responseBody`) when more is to be done with it here. */
  private responseTapNow(): BodyTap | null {
    const body = this.responseBody;
    if (body !== null) {
      this.responseBody = null;
      const { responseHeaders } = this.forwarding;
      this.responseTap = this.observer.tap(responseHeaders['content-type'], responseHeaders['content-encoding'], true);
      this.responseTap.write(body);
    }
    return this.responseTap;
  }

  recordSoFar(): void {
    this.record(false);
  }

  /**
   * Hand the exchange to the observer, once: `complete` false when its response ended early,
   * `clientLeft` when that was the client's doing.
   */
  private record(complete: boolean, clientLeft = false): void {
    if (this.recorded) return;
    this.recorded = true;
    // No tap made (no body came, or it came whole): the sampling decision is the pipeline's.
    if (this.responseTap === null) this.sampleOnRecord = true;
    const { req, status, responseHeaders } = this.forwarding;
    // Every stream in `openStreams` leaves it here: its exchange is recorded at the latest when it ends.
    if (this.responseTap?.stream) this.context.openStreams.delete(this);
    if (!complete) this.responseTapNow()?.cutShort();
    this.captureId = this.observer.captureId();
    this.method = req.method ?? 'GET';
    this.target = req.url ?? '/';
    this.status = status;
    this.requestHeaders = req.headers;
    this.responseHeaders = responseHeaders;
    // A body that was not teed was not counted either: its declared presence stands.
    this.request = this.requestTap && (this.requestTap.bytes > 0 || !this.requestTap.copying) ? this.requestTap : null;
    this.response = this.responseTap && this.responseTap.bytes > 0 ? this.responseTap : null;
    this.at = Date.now();
    this.lastByte = complete ? performance.now() - this.arrived : -1;
    this.clientLeft = clientLeft;
    this.socket = req.socket;
    this.observer.record(this);
    // What stream taps kept is the pipeline's now (its queue has a bound of its own), or dropped;
    // an exchange counted early may go on for hours.
    this.releaseTaps();
  }

  /** Hand a request the upstream never answered to the observer (`status` 0: the client left first). */
  private failed(status: 0 | 502 | 503 | 504): void {
    if (this.recorded) return;
    this.recorded = true;
    const req = this.forwarding.req;
    this.observer.failed({
      captureId: this.observer.captureId(),
      method: req.method ?? 'GET',
      target: req.url ?? '/',
      status,
      elapsed: performance.now() - this.arrived,
      at: Date.now(),
    });
  }

  /** What the stream taps kept no longer counts against the bound for open streams (once). */
  private releaseTaps(): void {
    this.requestTap?.release();
    this.responseTap?.release();
  }
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Origin-form stays as is; absolute-form (`http://host/p?q`) becomes its path and query. */
function requestPath(url: string | undefined): string | null {
  if (url === undefined) return null;
  if (url.startsWith('/')) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? `${parsed.pathname}${parsed.search}` : null;
  } catch {
    return null;
  }
}

/** A request has a body when it declares a non-zero length or a transfer coding (RFC 9112 §6.3), whatever its method. */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Let the tap see every request body chunk as undici streams it to the upstream. The request is
 * paused first so adding a 'data' listener does not start the flow: undici resumes it once it
 * attaches its own listener (client-h1 writeStream), so neither side misses a chunk, undici's
 * backpressure (pause/resume) still holds, and no generator or extra stream sits in the path.
 */
function tapRequest(req: IncomingMessage, tap: BodyTap): IncomingMessage {
  if (!tap.copying) return req;
  req.pause();
  // `read(0)` returns nothing and starts no flow; it only asks for data, which marks the request as
  // being read. Without it a small body, wholly buffered by the time undici resumes the stream, is
  // taken for unread, and Node "dumps" the request when the response finishes (removing every
  // 'data' listener and resuming it): 1.9 µs a request, a CPU profile of POST /posts showed.
  req.read(0);
  req.on('data', (chunk: Buffer) => tap.write(chunk));
  return req;
}
