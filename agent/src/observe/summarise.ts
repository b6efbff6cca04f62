import zlib from 'node:zlib';
import {
  fingerprint,
  inferShape,
  instanceExtras,
  type InstanceCounts,
  isFormMediaType,
  isJsonMediaType,
  isShapedBodyMediaType,
  isStreamMediaType,
  shapeFingerprint,
  type Shape,
  type WireBody,
  withoutInstances,
} from '@spectator/shared';
import type { BodyTap } from './exchange';
import { mediaType } from '../proxy/headers';
import { MULTIPART_FORM, multipartShape, urlencodedShape } from './form';
import { streamShape } from './stream';
import { jsonPrefixShape } from './json-prefix';

/** A body as it leaves the process: media type and flags, plus the shape when one was computed. */
export interface BodySummary {
  body: WireBody;
  shape?: Shape;
  /** What tells this body apart in a row key: media type, fingerprint and flags. */
  key: string;
  /**
   * The body's objects beyond one per place (`instanceExtras`), which its fingerprint leaves out;
   * absent when none (no list of records). The aggregator adds them up per row (`WireBody.instances`).
   */
  instances?: string;
}

/** RFC 9110 §8.3: a body without a media type may be treated as octet-stream. */
const UNLABELLED = 'application/octet-stream';

/** A `content-type` value reduced to its media type, and whether bodies of that type are shaped. */
export interface MediaClass {
  /** Lower-case, without parameters; `''` when absent. */
  type: string;
  /** Bodies of this type are copied and shaped: JSON, forms (urlencoded and multipart), and streams of items. */
  shaped: boolean;
  /** A stream of items (server-sent events, JSON lines): shaped from its first bytes. */
  stream: boolean;
  /** JSON: past the body limit, shaped from its first bytes too (`jsonPrefixShape`). */
  json: boolean;
}

const NO_MEDIA_TYPE: MediaClass = Object.freeze({ type: '', shaped: false, stream: false, json: false });
/** Every request looks its content types up twice or more; traffic has only a handful of distinct values. */
const mediaClasses = new Map<string, MediaClass>();
/** Bound of each cache keyed by values from traffic. */
const CACHE_SIZE = 256;

/** Classify a `content-type` header value (memoized; the first value of a repeated header counts). */
export function classifyContentType(value: string | string[] | undefined): MediaClass {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return NO_MEDIA_TYPE;
  let known = mediaClasses.get(text);
  if (known === undefined) {
    const type = mediaType(text);
    known = Object.freeze({
      type,
      shaped: isShapedBodyMediaType(type),
      stream: isStreamMediaType(type),
      json: isJsonMediaType(type),
    });
    if (mediaClasses.size >= CACHE_SIZE) mediaClasses.clear();
    mediaClasses.set(text, known);
  }
  return known;
}

type Flag = 'tooLarge' | 'unparsable' | 'unshaped';

/** Summaries without a shape are the same for every body of a media type: made once, shared (never mutated). */
const unshapedSummaries = new Map<string, Partial<Record<Flag | 'plain', BodySummary>>>();

function summaryWithout(contentType: string, flag: Flag | null): BodySummary {
  let byFlag = unshapedSummaries.get(contentType);
  if (byFlag === undefined) {
    if (unshapedSummaries.size >= CACHE_SIZE) unshapedSummaries.clear();
    unshapedSummaries.set(contentType, (byFlag = {}));
  }
  const slot = flag ?? 'plain';
  return (byFlag[slot] ??= Object.freeze({
    body: Object.freeze(flag ? { contentType, [flag]: true } : { contentType }),
    key: `${contentType}||${flag ?? ''}`,
  }));
}

/**
 * What `summariseBody(tap, false, 0)` gives for a body of `bytes` that came whole, had it been
 * written to a tap of this media class keeping at most `limit` bytes (`BodyTap`), without making the
 * tap: not a shaped media type; past the limit and not shaped from a prefix (JSON), too large;
 * otherwise unshaped. Not for a stream's body, whose tap may stop keeping early (its ledger).
 */
export function summariseUnshaped(media: MediaClass, bytes: number, limit: number): BodySummary {
  const contentType = media.type || UNLABELLED;
  if (!classifyContentType(contentType).shaped) return summaryWithout(contentType, null);
  return summaryWithout(
    contentType,
    limit > 0 && bytes > limit && !media.json && !media.stream ? 'tooLarge' : 'unshaped',
  );
}

/**
 * Summarise one tapped body. `shapeIt` false (sampled out under load) records the body as counted
 * but unshaped. Decompression is bounded by `limit`; nothing here throws.
 */
export function summariseBody(tap: BodyTap, shapeIt: boolean, limit: number): BodySummary {
  const contentType = tap.contentType || UNLABELLED;
  // Classified once: every observed body comes through here.
  const media = classifyContentType(contentType);
  if (!media.shaped) return summaryWithout(contentType, null);
  if (tap.overLimit) return summaryWithout(contentType, 'tooLarge');
  // A stream is shaped from the items its kept bytes hold whole, a JSON body cut at the body limit
  // from the values they hold whole; any other body only when all of it is here.
  const stream = tap.prefix && media.stream;
  if (!shapeIt || (!tap.prefix && (tap.cut || tap.copied < tap.bytes))) return summaryWithout(contentType, 'unshaped');
  // The chunks are the tap's to keep (see BodyTap): a body that came in one chunk needs no second copy.
  const bytes = tap.chunks.length === 1 ? (tap.chunks[0] as Buffer) : Buffer.concat(tap.chunks, tap.copied);
  const decoded = decode(bytes, tap.contentEncoding, limit, tap.cut);
  if (decoded === 'too-large') return summaryWithout(contentType, 'tooLarge');
  if (decoded === 'unreadable') return summaryWithout(contentType, 'unparsable');
  if (stream || isFormMediaType(contentType)) {
    const shape = stream
      ? streamShape(decoded, contentType, tap.cut)
      : contentType === MULTIPART_FORM
        ? multipartShape(decoded, tap.boundary)
        : urlencodedShape(decoded);
    if (shape === null) return summaryWithout(contentType, 'unparsable');
    if (shape === 'no-items') return summaryWithout(contentType, 'unshaped');
    return shapedSummary(contentType, shape);
  }
  if (tap.cut) {
    // Cut short (the exchange ended early): not shaped. Past the body limit: shaped from its first bytes.
    if (tap.bytes <= limit) return summaryWithout(contentType, 'unshaped');
    const shape = jsonPrefixShape(decoded.toString('utf8'));
    if (shape === null) return summaryWithout(contentType, 'tooLarge');
    return shapedSummary(contentType, shape);
  }
  let value: unknown;
  try {
    value = JSON.parse(decoded.toString('utf8'));
  } catch {
    return summaryWithout(contentType, 'unparsable');
  }
  const id = shapeFingerprint(value, undefined, COUNTS);
  const summary: BodySummary = {
    body: { contentType, shape: id },
    shape: shapeOf(id, value),
    key: `${contentType}|${id}|`,
  };
  if (COUNTS.extras !== '') summary.instances = COUNTS.extras;
  return summary;
}

/** Where `shapeFingerprint` puts a body's instance counts (the agent is single-threaded: one serves every call). */
const COUNTS: InstanceCounts = { extras: '' };

/** A body shaped other than from a parsed JSON value (a stream, a form, a prefix): its counts beside its fingerprint. */
function shapedSummary(contentType: string, counted: Shape): BodySummary {
  const shape = withoutInstances(counted);
  const id = fingerprint(shape);
  const summary: BodySummary = { body: { contentType, shape: id }, shape, key: `${contentType}|${id}|` };
  const extras = instanceExtras(counted);
  if (extras !== '') summary.instances = extras;
  return summary;
}

/**
 * Shapes by fingerprint. Traffic repeats a handful of shapes per endpoint, so the fingerprint
 * (one walk, no shape built) settles most bodies and the shape is built only the first time a
 * fingerprint is seen (shapes are never mutated, so one object serves every row).
 */
const knownShapes = new Map<string, Shape>();

function shapeOf(id: string, value: unknown): Shape {
  let shape = knownShapes.get(id);
  if (shape === undefined) {
    // Sent as the fingerprint's shape, which its counts are no part of.
    shape = withoutInstances(inferShape(value));
    if (knownShapes.size >= CACHE_SIZE) knownShapes.clear();
    knownShapes.set(id, shape);
  }
  return shape;
}

/**
 * Undo `content-encoding` (gzip, x-gzip, deflate, br), never producing more than `limit` bytes.
 * `partial`: the bytes stop before the encoded body does (a stream's prefix); what they hold is
 * decoded and the missing end is not an error.
 */
function decode(
  bytes: Buffer,
  contentEncoding: string,
  limit: number,
  partial: boolean,
): Buffer | 'too-large' | 'unreadable' {
  const encoding = contentEncoding.trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return bytes;
  const options = {
    maxOutputLength: Math.max(limit, 1),
    ...(partial ? { finishFlush: zlib.constants.Z_SYNC_FLUSH } : {}),
  };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.gunzipSync(bytes, options);
    if (encoding === 'deflate') return inflateEither(bytes, options);
    if (encoding === 'br')
      return zlib.brotliDecompressSync(bytes, {
        maxOutputLength: options.maxOutputLength,
        ...(partial ? { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH } : {}),
      });
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError
      ? 'too-large'
      : 'unreadable';
  }
  return 'unreadable';
}

/** `deflate` is zlib-wrapped per RFC 9110 §8.4.1.2, but some servers send raw deflate; accept both. */
function inflateEither(bytes: Buffer, options: zlib.ZlibOptions): Buffer {
  try {
    return zlib.inflateSync(bytes, options);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw err;
    return zlib.inflateRawSync(bytes, options);
  }
}
