/**
 * The "count of interest" of an undocumented endpoint (seed-spec §2, Undocumented endpoint): the
 * sum of all requests and responses of interest, i.e. those with a JSON body (DESIGN.md; forms and
 * streams are shaped too but not counted). Two interactions with one request body and one response
 * body each give 4.
 */

/** `type/subtype` before any parameters; the subtype is `json` or ends in `+json`. */
const JSON_MEDIA_TYPE = /^application\/(?:[!#$&^_.+\w-]+\+)?json$/;

/**
 * Media types whose bodies are shaped: `application/json` and any `application/*+json`
 * (`application/problem+json`, `application/vnd.api+json`), with or without parameters
 * (`; charset=utf-8`), in any letter case. Anything else, including null and `''`, is false.
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  const mediaType = bareMediaType(contentType);
  return mediaType !== null && JSON_MEDIA_TYPE.test(mediaType);
}

/** `type/subtype` of a `content-type` value, lower-case and without parameters; null when not a string. */
function bareMediaType(contentType: string | null | undefined): string | null {
  return typeof contentType === 'string' ? contentType.split(';', 1)[0]!.trim().toLowerCase() : null;
}

/**
 * True for the form media types, `application/x-www-form-urlencoded` and `multipart/form-data`
 * (with or without parameters, any letter case): the agent shapes their field names like JSON.
 */
export function isFormMediaType(contentType: string | null | undefined): boolean {
  const mediaType = bareMediaType(contentType);
  return mediaType === 'application/x-www-form-urlencoded' || mediaType === 'multipart/form-data';
}

/**
 * Media types of a body that is a sequence of items sent one after another: server-sent events
 * (`text/event-stream`), JSON lines (`application/x-ndjson`, `application/jsonl`, …) and JSON text
 * sequences (`application/json-seq`, RFC 7464). The agent shapes such a body as an array of its
 * items (each event's data); an export documents the shape of one item.
 */
export function isStreamMediaType(contentType: string | null | undefined): boolean {
  const mediaType = bareMediaType(contentType);
  return mediaType !== null && STREAM_MEDIA_TYPES.has(mediaType);
}

/** Bodies of these media types are shaped by the agent: JSON, forms, and streams of items. */
export function isShapedBodyMediaType(contentType: string | null | undefined): boolean {
  return isJsonMediaType(contentType) || isFormMediaType(contentType) || isStreamMediaType(contentType);
}

const STREAM_MEDIA_TYPES = new Set([
  'text/event-stream',
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonl',
  'application/jsonlines',
  'application/x-jsonlines',
  'application/json-seq',
]);

/**
 * Count of interest: 1 per request with a JSON body + 1 per response with a JSON body, times
 * `count` (the number of aggregated interactions). A `null` side had no body. Throws a RangeError
 * when `count` is not a non-negative integer.
 */
export function countOfInterest(o: {
  request: { contentType: string } | null;
  response: { contentType: string } | null;
  count: number;
}): number {
  if (!Number.isSafeInteger(o.count) || o.count < 0) {
    throw new RangeError(`count must be a non-negative integer, got ${String(o.count)}`);
  }
  const perInteraction =
    Number(isJsonMediaType(o.request?.contentType)) + Number(isJsonMediaType(o.response?.contentType));
  return perInteraction * o.count;
}
