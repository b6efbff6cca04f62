import zlib from 'node:zlib';
import { fingerprint, inferShape, isJsonMediaType, type Shape, type WireBody } from '@spectator/shared';
import type { BodyTap } from './exchange';

/** A body as it leaves the process: media type and flags, plus the shape when one was computed. */
export interface BodySummary {
  body: WireBody;
  shape?: Shape;
}

const FORM = 'application/x-www-form-urlencoded';
/** RFC 9110 §8.3: a body without a media type may be treated as octet-stream. */
const UNLABELLED = 'application/octet-stream';

/** Bodies of these media types are copied and shaped: JSON, and form field names. */
export function isShapedMediaType(contentType: string): boolean {
  return contentType === FORM || isJsonMediaType(contentType);
}

/**
 * Summarise one tapped body. `shapeIt` false (sampled out under load) records the body as counted
 * but unshaped. Decompression is bounded by `limit`; nothing here throws.
 */
export function summariseBody(tap: BodyTap, shapeIt: boolean, limit: number): BodySummary {
  const contentType = tap.contentType || UNLABELLED;
  if (!isShapedMediaType(contentType)) return { body: { contentType } };
  if (tap.overLimit) return { body: { contentType, tooLarge: true } };
  if (!shapeIt || tap.copied < tap.bytes) return { body: { contentType, unshaped: true } };
  const decoded = decode(Buffer.concat(tap.chunks, tap.copied), tap.contentEncoding, limit);
  if (decoded === 'too-large') return { body: { contentType, tooLarge: true } };
  if (decoded === 'unreadable') return { body: { contentType, unparsable: true } };
  let value: unknown;
  try {
    value = contentType === FORM ? formFields(decoded) : JSON.parse(decoded.toString('utf8'));
  } catch {
    return { body: { contentType, unparsable: true } };
  }
  const shape = inferShape(value);
  return { body: { contentType, shape: fingerprint(shape) }, shape };
}

/** Undo `content-encoding` (gzip, x-gzip, deflate, br), never producing more than `limit` bytes. */
function decode(bytes: Buffer, contentEncoding: string, limit: number): Buffer | 'too-large' | 'unreadable' {
  const encoding = contentEncoding.trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return bytes;
  const options = { maxOutputLength: Math.max(limit, 1) };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.gunzipSync(bytes, options);
    if (encoding === 'deflate') return inflateEither(bytes, options);
    if (encoding === 'br') return zlib.brotliDecompressSync(bytes, options);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError ? 'too-large' : 'unreadable';
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

/** A form body as an object of its field names (each a string); the values are never kept. */
function formFields(bytes: Buffer): Record<string, string> {
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of new URLSearchParams(bytes.toString('utf8')).keys()) fields[name] = '';
  return fields;
}
