import {
  DEFAULT_SHAPE_LIMITS,
  inferShape,
  isJsonMediaType,
  mergeShapes,
  type Field,
  type ObjectShape,
  type Shape,
} from '@spectator/shared';
import { mediaType } from '../proxy/headers';

/**
 * Form bodies as shapes: the field names, and for each field what kind of value it held, never the
 * value. `application/x-www-form-urlencoded` fields are strings (with the format hint a JSON string
 * would get: `email`, `uuid`, …); `multipart/form-data` (RFC 7578) parts are strings too, a file part
 * (one with a `filename`) is `string` with format `binary` (as OpenAPI describes uploads), and a part
 * sent as JSON has the shape of its JSON. A name sent more than once is an array of its parts.
 * At most {@link MAX_FORM_PARTS} parts are read; the shape of a longer form is marked truncated.
 */

export const MULTIPART_FORM = 'multipart/form-data';

/** One field of a form body as the summariser sees it (inside the agent only). */
interface FormPart {
  name: string;
  /** Its value's shape. */
  shape: Shape;
}

const BINARY: Shape = Object.freeze({ kind: 'string', format: 'binary' });
/**
 * Parts read from one form body. Read whole, 100,000 one-byte urlencoded fields (663 KB) took
 * 110–230 ms and 20,000 multipart parts (1.1 MB) 170–230 ms, long enough to hold up the proxy's
 * event loop. With the cap they take 1.1–1.4 and 3–5 ms (6–10 and 13–21 ms before the JIT warms
 * up), against 37 ms to `JSON.parse` a JSON object of 1 MB.
 */
export const MAX_FORM_PARTS = 1_000;
/** Longest text part whose format is looked at (a string's format hint is never longer: see shared's formats). */
const MAX_TEXT_FOR_FORMAT = 2048;

/** The shape of an urlencoded form body. */
export function urlencodedShape(bytes: Buffer): ObjectShape {
  const text = bytes.toString('utf8');
  // Only the first MAX_FORM_PARTS fields are parsed: the text up to the separator after them.
  let cut = -1;
  for (let count = 0, at = 0; count < MAX_FORM_PARTS; count++) {
    cut = text.indexOf('&', at);
    if (cut < 0) break;
    at = cut + 1;
  }
  const parts: FormPart[] = [];
  for (const [name, value] of new URLSearchParams(cut < 0 ? text : text.slice(0, cut)))
    parts.push({ name, shape: inferShape(value) });
  return formShape(parts, cut >= 0);
}

/**
 * The shape of a multipart/form-data body with this boundary, or `null` when the body is not
 * multipart with that boundary (no delimiter, a part without headers' end, or no part named).
 */
export function multipartShape(bytes: Buffer, boundary: string): ObjectShape | null {
  if (boundary === '') return null;
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  // The first delimiter may open the body; every later one follows a CRLF (RFC 2046 §5.1.1).
  let at = bytes.indexOf(delimiter);
  if (at < 0) return null;
  const next = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const parts: FormPart[] = [];
  let truncated = false;
  for (let count = 0; ; count++) {
    const afterDelimiter = at + delimiter.length;
    // `--` after a delimiter closes the body.
    if (bytes[afterDelimiter] === 0x2d && bytes[afterDelimiter + 1] === 0x2d) break;
    if (count === MAX_FORM_PARTS) {
      truncated = true;
      break;
    }
    const headersStart = bytes.indexOf('\r\n', afterDelimiter);
    if (headersStart < 0) return null;
    const headersEnd = bytes.indexOf('\r\n\r\n', headersStart);
    if (headersEnd < 0) return null;
    const end = bytes.indexOf(next, headersEnd);
    if (end < 0) return null;
    const part = readPart(
      bytes.toString('latin1', headersStart + 2, headersEnd + 2),
      bytes.subarray(headersEnd + 4, end),
    );
    if (part) parts.push(part);
    at = end + 2;
  }
  return parts.length === 0 ? null : formShape(parts, truncated);
}

/** The `boundary` parameter of a multipart `content-type` value (quoted or not), or `''`. */
export function boundaryOf(contentType: string | string[] | undefined): string {
  const text = Array.isArray(contentType) ? contentType[0] : contentType;
  return text ? (parameter(text, 'boundary') ?? '') : '';
}

/** One part: its name from `content-disposition`, and the shape of its content. `null` for a part without a name. */
function readPart(headerText: string, content: Buffer): FormPart | null {
  let disposition = '';
  let contentType = '';
  for (const line of headerText.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const header = line.slice(0, colon).trim().toLowerCase();
    if (header === 'content-disposition') disposition = line.slice(colon + 1);
    else if (header === 'content-type') contentType = line.slice(colon + 1);
  }
  const name = parameter(disposition, 'name');
  if (name === null) return null;
  if (parameter(disposition, 'filename') !== null || parameter(disposition, 'filename*') !== null)
    return { name, shape: BINARY };
  if (isJsonMediaType(mediaType(contentType))) {
    try {
      return { name, shape: inferShape(JSON.parse(content.toString('utf8'))) };
    } catch {
      // Not JSON after all: a string like any other text part.
    }
  }
  return {
    name,
    shape: content.length > MAX_TEXT_FOR_FORMAT ? { kind: 'string' } : inferShape(content.toString('utf8')),
  };
}

/** `; key="quoted \\"value\\""` or `; key=token` in a header value, for each parameter read. */
const PARAMETERS = {
  boundary: parameterPattern('boundary'),
  name: parameterPattern('name'),
  filename: parameterPattern('filename'),
  'filename*': parameterPattern('filename\\*'),
};

function parameterPattern(key: string): RegExp {
  return new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i');
}

/** A parameter of a header value, unquoted; `null` when absent. */
function parameter(value: string, key: keyof typeof PARAMETERS): string | null {
  const match = PARAMETERS[key].exec(value);
  if (!match) return null;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : (match[2] ?? '');
}

/**
 * The fields as an object shape: names in code-unit order, each required; a repeated name is an
 * array of its parts' merged shape. `truncated` (parts left unread) marks the shape truncated, as
 * do names beyond the shape limit.
 */
function formShape(parts: readonly FormPart[], truncated: boolean): ObjectShape {
  const byName = new Map<string, { shape: Shape; count: number }>();
  for (const { name, shape } of parts) {
    const seen = byName.get(name);
    if (seen) {
      seen.count++;
      seen.shape = mergeShapes(seen.shape, shape);
    } else if (byName.size < DEFAULT_SHAPE_LIMITS.maxFields) {
      byName.set(name, { shape, count: 1 });
    } else {
      truncated = true;
    }
  }
  const fields: Field[] = [...byName.keys()].sort().map((name) => {
    const { shape, count } = byName.get(name) as { shape: Shape; count: number };
    return { name, required: true, shape: count === 1 ? shape : { kind: 'array', items: shape } };
  });
  return truncated ? { kind: 'object', fields, truncated: true } : { kind: 'object', fields };
}
