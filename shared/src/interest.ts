/**
 * The "count of interest" of an undocumented endpoint (seed-spec §2, Undocumented endpoint): the
 * sum of all requests and responses of interest, i.e. those with a JSON body. Two interactions with
 * one request body and one response body each give 4.
 */

/** `type/subtype` before any parameters; the subtype is `json` or ends in `+json`. */
const JSON_MEDIA_TYPE = /^application\/(?:[!#$&^_.+\w-]+\+)?json$/;

/**
 * Media types whose bodies are shaped: `application/json` and any `application/*+json`
 * (`application/problem+json`, `application/vnd.api+json`), with or without parameters
 * (`; charset=utf-8`), in any letter case. Anything else, including null and `''`, is false.
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  if (typeof contentType !== 'string') return false;
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return JSON_MEDIA_TYPE.test(mediaType);
}

/**
 * True for the form media types, `application/x-www-form-urlencoded` and `multipart/form-data`
 * (with or without parameters, any letter case): the agent shapes their field names like JSON.
 */
export function isFormMediaType(contentType: string | null | undefined): boolean {
  if (typeof contentType !== 'string') return false;
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase();
  return mediaType === 'application/x-www-form-urlencoded' || mediaType === 'multipart/form-data';
}

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
  const perInteraction = Number(isJsonMediaType(o.request?.contentType)) + Number(isJsonMediaType(o.response?.contentType));
  return perInteraction * o.count;
}
