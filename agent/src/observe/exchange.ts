import type { IncomingHttpHeaders } from 'node:http';
import {
  flatStructure,
  isIdentity,
  isJson,
  KEY_SCAN,
  keyFingerprint,
  NOVELTY_BYTES,
  SCAN_BYTES,
  structureFingerprint,
} from './novelty';
import type { SampleSlot } from './sampler';

/** Bodies up to this size read whole from several chunks are copied into `textScratch` (see `BodyTap.text`). */
const TEXT_SCRATCH_BYTES = 256 * 1024;

/** Made on first use, then reused: the agent is single-threaded and the fingerprints keep no reference. */
let textScratch: Buffer = Buffer.alloc(0);

/** The chunks of a tap that holds none yet: shared, so a tap that only counts allocates no array. */
const NO_CHUNKS: readonly Buffer[] = Object.freeze([]);

/**
 * The bytes all open streams keep, against a bound: a stream may stay open for hours, so without
 * it every open event stream would keep its prefix for as long (a thousand open streams, 64 MB).
 */
export interface StreamLedger {
  held: number;
  readonly limit: number;
}

/** What a `BodyTap` is told about its body when the body starts. */
export interface BodyTapOptions {
  /** Media type (lower-case, no parameters); `''` when absent. */
  contentType: string;
  /** `content-encoding` as sent (`gzip`, `br`, `deflate`) or `''`. */
  contentEncoding: string;
  /** The body limit: a body beyond it is too large to shape; 0 = bodies are not looked at. */
  limit: number;
  /** Whether to keep the bytes (false: sampled out, or not a shaped media type; only counted). */
  copy: boolean;
  /** A multipart body's boundary (from `content-type`); `''` (the default) for other bodies. */
  boundary?: string;
  /**
   * A stream of items (server-sent events, JSON lines) or a JSON body: past the limit its first
   * `limit` bytes are kept (`cut`) instead of none (`overLimit`), and shaped from the items or
   * values they hold whole. Default false.
   */
  prefix?: boolean;
  /**
   * A stream of items (server-sent events, JSON lines), which may stay open for hours: the proxy
   * counts it once it has been open a while (`streamRecordAfterMs`). Default false.
   */
  stream?: boolean;
  /** What all open streams keep: a stream stops keeping (`cut`) when it is full. Default none. */
  ledger?: StreamLedger | null;
  /**
   * A JSON body without a content coding whose key fingerprint (novelty.ts) is wanted: it is taken
   * from each chunk as it is kept, while the chunk is fresh, not read again when the exchange is
   * recorded. Default false (taken when asked for, see `variantKeys`).
   */
  keysOnArrival?: boolean;
}

/**
 * The bytes of one body as seen on the hot path: counted always, kept (up to the body limit)
 * only when the media type is one we shape. Chunks are kept as they are, not copied: node:http's
 * parser copies every request body chunk into a Buffer of its own, and undici's response chunks
 * are views of one socket read each, which Node allocates afresh for every read; neither is written
 * to again. Not copying saves a memcpy (100 KB for a 100 KB body) on the hot path.
 */
export class BodyTap {
  bytes = 0;
  copied = 0;
  overLimit = false;
  /**
   * The kept bytes end before the body did: a stream (`prefix`) went past the limit, or the
   * exchange ended early (`cutShort`). A stream is then shaped from its first complete items.
   */
  cut = false;
  chunks: readonly Buffer[] = NO_CHUNKS;
  /** Bytes counted against the ledger, until `release`. */
  private held = 0;
  /**
   * The key fingerprint of the bytes kept so far, taken as they came (`keysOnArrival`); -1 when not
   * taken. The fingerprint reads the first SCAN_BYTES only: a first chunk that long settles it.
   */
  private keys = -1;
  /**
   * `keys` were taken from every byte kept, which are one flat object (`KEY_SCAN.flat`): the
   * structure fingerprint follows from them (`flatStructure`), with no second read, while the body
   * stays whole (`structureKnown`). A field, so callers ask the getter only of the few such taps.
   */
  flat = false;

  readonly contentType: string;
  readonly contentEncoding: string;
  readonly boundary: string;
  readonly prefix: boolean;
  readonly stream: boolean;
  private readonly limit: number;
  private readonly copy: boolean;
  private readonly ledger: StreamLedger | null;
  private readonly keysOnArrival: boolean;

  constructor(options: BodyTapOptions) {
    this.contentType = options.contentType;
    this.contentEncoding = options.contentEncoding;
    this.limit = options.limit;
    this.copy = options.copy;
    this.boundary = options.boundary ?? '';
    this.prefix = options.prefix ?? false;
    this.stream = options.stream ?? false;
    this.ledger = options.ledger ?? null;
    this.keysOnArrival = options.keysOnArrival ?? false;
  }

  /** True when bytes written are kept (a shaped media type, sampled, limit above 0). */
  get copying(): boolean {
    return this.copy && this.limit > 0;
  }

  write(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.overLimit || this.cut || this.limit === 0) return;
    if (this.bytes > this.limit && this.prefix) {
      // A view of the chunk up to the limit, not a copy.
      if (this.copy) this.keep(chunk.subarray(0, this.limit - this.copied));
      this.cut = true;
      return;
    }
    if (this.bytes > this.limit) {
      // Past the limit a body we cannot shape from a prefix (a form) is useless: release what we hold.
      this.overLimit = true;
      this.chunks = NO_CHUNKS;
      this.copied = 0;
      return;
    }
    if (this.copy) this.keep(chunk);
  }

  /** The exchange ended before the body did (the client went away, the upstream failed). */
  cutShort(): void {
    this.cut = true;
  }

  /** Shape work is done with the kept bytes: let them go (a stream's tap may live on for hours). */
  drop(): void {
    this.chunks = NO_CHUNKS;
  }

  /** The exchange is over: what this tap kept no longer counts against the ledger (once). */
  release(): void {
    if (this.ledger === null || this.held === 0) return;
    this.ledger.held -= this.held;
    this.held = 0;
  }

  private keep(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.ledger !== null) {
      if (this.ledger.held + chunk.length > this.ledger.limit) {
        this.cut = true;
        return;
      }
      this.ledger.held += chunk.length;
      this.held += chunk.length;
    }
    // The usual body comes in one chunk: an array of one, not an empty one grown by a push (to 17 slots).
    if (this.chunks === NO_CHUNKS) this.chunks = [chunk];
    else (this.chunks as Buffer[]).push(chunk);
    this.copied += chunk.length;
    if (!this.keysOnArrival) {
      // Keys taken when asked for (`variantKeys`) are of the bytes kept then.
      this.keys = -1;
      this.flat = false;
      return;
    }
    // The first chunk is fingerprinted as it comes; a second one changes nothing when the first held
    // all the bytes the fingerprint reads, else it is taken again from all the chunks when asked for.
    if (this.chunks.length === 1) this.takeKeys(chunk);
    else {
      this.flat = false;
      if ((this.chunks[0] as Buffer).length < SCAN_BYTES) this.keys = -1;
    }
  }

  private takeKeys(text: Buffer): number {
    this.keys = keyFingerprint(text);
    this.flat = KEY_SCAN.flat;
    return this.keys;
  }

  /**
   * The key fingerprint (novelty.ts) of a body whose bytes are all here, or null when it cannot be
   * taken cheaply (not JSON, encoded, cut, larger than NOVELTY_BYTES, nothing kept).
   */
  variantKeys(): number | null {
    if (!this.whole()) return null;
    // Taken as the bytes came (only for a JSON body without a content coding).
    if (this.keys >= 0) return this.keys;
    if (!isIdentity(this.contentEncoding) || !isJson(this.contentType)) return null;
    return this.takeKeys(this.text());
  }

  /**
   * The body's structure is known without reading it again (`variantKeys` found it one flat
   * object, as most small request and answer bodies are): `structureKeys` then costs nothing.
   */
  get structureKnown(): boolean {
    return this.flat && this.keys >= 0 && this.whole();
  }

  /**
   * The structure fingerprint (novelty.ts) of the whole body, or null when it cannot be taken
   * (as `variantKeys`, but whatever its size). Reads every byte unless `structureKnown`: the caller
   * keeps it within a `ScanBudget`.
   */
  structureKeys(): number | null {
    if (this.flat && this.structureKnown) return flatStructure(this.keys);
    if (!this.whole(Infinity) || !isIdentity(this.contentEncoding) || !isJson(this.contentType)) return null;
    return structureFingerprint(this.text());
  }

  /**
   * A body past NOVELTY_BYTES, all of it kept, JSON without a content coding: it gives no key
   * fingerprint (`variantKeys`), only its whole structure (`structureKeys`).
   */
  largeWhole(): boolean {
    return (
      this.copied > NOVELTY_BYTES &&
      this.whole(Infinity) &&
      isIdentity(this.contentEncoding) &&
      isJson(this.contentType)
    );
  }

  /**
   * All of the body is kept, and at most `limit` bytes: NOVELTY_BYTES for its first keys; any size
   * (what the tap keeps) for the whole structure, which the caller pays from its scan budget.
   */
  private whole(limit = NOVELTY_BYTES): boolean {
    return this.copied > 0 && this.copied === this.bytes && this.copied <= limit && !this.cut && !this.overLimit;
  }

  /**
   * The kept bytes as one buffer, for a fingerprint to read (`keyFingerprint`, `structureFingerprint`
   * return numbers and keep nothing). A body kept in several chunks is copied into one buffer reused
   * from call to call (`textScratch`), not a fresh one: a 100 KB answer comes in two or three socket
   * reads, and allocating its copy cost more than fingerprinting it (CPU profile, docs/benchmarks.md #18).
   */
  private text(): Buffer {
    if (this.chunks.length === 1) return this.chunks[0] as Buffer;
    if (this.copied > TEXT_SCRATCH_BYTES) return Buffer.concat(this.chunks, this.copied);
    if (textScratch.length < this.copied) textScratch = Buffer.allocUnsafeSlow(TEXT_SCRATCH_BYTES);
    let at = 0;
    for (const chunk of this.chunks) {
      textScratch.set(chunk, at);
      at += chunk.length;
    }
    return textScratch.subarray(0, this.copied);
  }
}

/** One observed request and response, handed to the observation pipeline after the response went out. */
export interface Exchange {
  captureId: string;
  method: string;
  /** The raw request target (path and query). It never leaves the process: the pipeline templates it. */
  target: string;
  status: number;
  requestHeaders: IncomingHttpHeaders;
  responseHeaders: IncomingHttpHeaders;
  /** `null` when the request had no body. */
  request: BodyTap | null;
  /** `null` when the response had no body (HEAD, 204, 304, empty). */
  response: BodyTap | null;
  /** Epoch milliseconds when the response ended. */
  at: number;
  /** Milliseconds from the request's arrival until the response's status and headers came. */
  firstByte: number;
  /** Milliseconds from the request's arrival until the response ended; -1 when it did not end (cut short). */
  lastByte: number;
  /** The client left before the response ended. */
  clientLeft: boolean;
  /** The client's connection (a TLS one carries its certificate, for `--consumer cert:subject`); read, never kept. */
  socket?: object;
  /**
   * Body bytes the sampler reserved shape work for when the response started (the sampling
   * decision); 0 when it chose not to shape this interaction; negative when it chose not to, but
   * the (small) bodies are kept to notice a new variant, which is then shaped (observe/novelty.ts).
   */
  sampledBytes: number;
  /** The sampler's slot for this interaction's key, as `sample` left it in its `SampleCarrier`; absent: looked up again. */
  sampleSlot?: SampleSlot | null;
  /**
   * The sampling decision was left to the pipeline, made when it accepts the exchange (`sampledBytes`
   * is set then): its whole response body came in its first chunk and is kept by reference meanwhile
   * (`responseBody`), or it had none.
   */
  sampleOnRecord?: boolean;
  /**
   * A request body that came whole with its headers, kept by reference (never copied, never changed):
   * its tap (`request`, null meanwhile) is made when the pipeline accepts the exchange, with the other
   * exchanges of that turn, not in the proxy's turn. Let go once the tap is made.
   */
  requestBody?: Buffer | null;
  /** A response body that came whole in its first chunk, as `requestBody` (`response` null meanwhile; with `sampleOnRecord`). */
  responseBody?: Buffer | null;
}

/** Where `sample` leaves the sampler's slot of an interaction's key, for `record` to be handed it back. */
export interface SampleCarrier {
  sampleSlot?: SampleSlot | null;
}

/**
 * A request the upstream never answered: the agent answered its failure itself (`status` 502, 503
 * or 504), or the client left before any answer came (`status` 0). Counted and timed, never shaped.
 */
export interface FailedExchange {
  captureId: string;
  method: string;
  /** The raw request target; templated by the pipeline, it never leaves the process. */
  target: string;
  status: 0 | 502 | 503 | 504;
  /** Milliseconds from the request's arrival until the agent answered, or the client left. */
  elapsed: number;
  /** Epoch milliseconds when it happened. */
  at: number;
}

/** What the proxy needs from the observing side; implemented by the observation pipeline. */
export interface ExchangeObserver {
  /** Current capture id, stamped on each exchange when it starts. */
  captureId(): string;
  /**
   * A tap for a body with these headers: keeps shaped media types when `copy`, else only counts.
   * `keysOnArrival`: a kept JSON body will be fingerprinted (a response the sampler watches or
   * shapes): take its key fingerprint from each chunk as it comes (see `BodyTapOptions`).
   */
  tap(
    contentType: string | string[] | undefined,
    contentEncoding: string | string[] | undefined,
    copy: boolean,
    keysOnArrival?: boolean,
  ): BodyTap;
  /**
   * Decide, when the response starts, whether this interaction's bodies get shape work, so a
   * sampled-out response body is never copied. `requestCopied`: request body bytes copied so far.
   * Returns the body bytes shape work was reserved for (the exchange's `sampledBytes`), 0 for no,
   * their negative for "no, but keep the body to look for a new variant". The key's sampler slot
   * is left in `carrier` (when given), to come back as the exchange's `sampleSlot`.
   */
  sample(
    method: string,
    target: string,
    status: number,
    responseHeaders: IncomingHttpHeaders,
    requestCopied: number,
    carrier?: SampleCarrier,
  ): number;
  /** Hand over a finished exchange. Must be cheap and must never throw. */
  record(exchange: Exchange): void;
  /** Hand over a request the upstream never answered. Must be cheap and must never throw. */
  failed(exchange: FailedExchange): void;
}
