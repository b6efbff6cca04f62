import { conformsTo, type EndpointShapes, observedParameters, parameterChanges, type Shape } from '@spectator/shared';
import type { ObservationRow } from './observed-shapes';

/**
 * Whether the exchanges of one observation row match documented behaviour: a documented request
 * content type, a documented status with its content type, and bodies that conform (closed
 * conformance, from @spectator/shared) wherever both sides have a shape. A side without a
 * recorded shape (bodies not documented, or too large to shape) is not compared. Where the version
 * documents parameters and the row carries names, every query parameter and documentable request
 * header must be documented and every required one present (the same rule as `diffEndpoint`).
 */
export function rowConforms(documented: EndpointShapes, row: ObservationRow, shapes: ReadonlyMap<string, Shape>): boolean {
  if (documented.parameters && parameterChanges(documented.parameters, observedParameters([row])).length > 0) return false;
  if (row.requestContentType !== null) {
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

function bodyConforms(observedFingerprint: string | null, documented: Shape | null, shapes: ReadonlyMap<string, Shape>): boolean {
  if (observedFingerprint === null || documented === null) return true;
  const observed = shapes.get(observedFingerprint);
  return observed === undefined || conformsTo(observed, documented);
}
