import {
  conformsTo,
  type EndpointShapes,
  observedParameters,
  parameterChanges,
  REMOVED_STATUSES,
  type Shape,
} from '@spectator/shared';
import { LruCache } from '../common/lru-cache';
import { acceptedStatus, type ObservationRow } from './observed-shapes';

/**
 * Whether the exchanges of one observation row match documented behaviour: a documented request
 * content type (for an accepted exchange, 2xx/3xx, only), a documented status with its content
 * type, and bodies that conform (closed conformance, from @spectator/shared) wherever both sides
 * have a shape. A side without a
 * recorded shape (bodies not documented, or too large to shape) is not compared. Where the version
 * documents parameters and the row carries names, every query parameter and documentable request
 * header must be documented and every required one present (the same rule as `diffEndpoint`).
 */
export function rowConforms(
  documented: EndpointShapes,
  row: ObservationRow,
  shapes: ReadonlyMap<string, Shape>,
): boolean {
  if (documented.parameters && parameterChanges(documented.parameters, observedParameters([row])).length > 0)
    return false;
  // A request the API did not accept says nothing about what it accepts (observedEndpointShapes).
  if (row.requestContentType !== null && acceptedStatus(row.status)) {
    if (documented.request === null) return false;
    if (documented.request.contentType !== row.requestContentType) return false;
    if (!bodyConforms(row.requestShape, documented.request.shape, shapes)) return false;
  }
  const response = documented.responses.find((r) => r.status === row.status);
  if (response === undefined) return false;
  if (row.responseContentType !== null) {
    if (response.contentType !== row.responseContentType) return false;
    if (!bodyConforms(row.responseShape, response.shape, shapes)) return false;
  }
  return true;
}

function bodyConforms(
  observedFingerprint: string | null,
  documented: Shape | null,
  shapes: ReadonlyMap<string, Shape>,
): boolean {
  if (observedFingerprint === null || documented === null) return true;
  const observed = shapes.get(observedFingerprint);
  return observed === undefined || conformsTo(observed, documented);
}

/**
 * Conformance of rows to versions, remembered per process: versions and shapes never change once
 * written, so the answer for a version and a row's status, media types, shapes and parameter names
 * never changes either (the names are part of the key: rows of equal shapes may carry other names).
 */
export class ConformanceCache {
  private readonly answers = new LruCache<string, boolean>(200_000);

  /**
   * Whether `row` conforms to the version `versionId` (`version` is its documentation; undefined
   * when it is gone: conforms to nothing). A version that removed its endpoint is conformed to by
   * exchanges answered 404, 405 or 410 only.
   */
  conforms(
    versionId: string,
    version: (EndpointShapes & { removed?: boolean }) | undefined,
    row: ObservationRow,
    shapes: ReadonlyMap<string, Shape>,
  ): boolean {
    const key = [
      versionId,
      row.status,
      row.requestContentType ?? ' ',
      row.requestShape ?? ' ',
      row.responseContentType ?? ' ',
      row.responseShape ?? ' ',
      JSON.stringify([row.query ?? null, row.requestHeaders ?? null]),
    ].join('\u0000');
    let answer = this.answers.get(key);
    if (answer === undefined) {
      answer =
        version !== undefined &&
        (version.removed === true ? REMOVED_STATUSES.includes(row.status) : rowConforms(version, row, shapes));
      this.answers.set(key, answer);
    }
    return answer;
  }
}
