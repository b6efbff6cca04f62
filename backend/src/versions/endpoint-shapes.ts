import { type EndpointShapes, extendParameters, mergeAllShapes, type Shape } from '@spectator/shared';

function mergeOptional(a: Shape | null, b: Shape | null): Shape | null {
  if (a === null) return b;
  if (b === null) return a;
  return mergeAllShapes([a, b]);
}

/**
 * Documented behaviour extended by newly observed behaviour: shapes merged (so what was
 * documented stays accepted), new status codes added, observed parameters added as optional
 * (`extendParameters`). The observed content type wins where they differ.
 */
export function extendEndpointShapes(documented: EndpointShapes, observed: EndpointShapes): EndpointShapes {
  const request =
    observed.request === null
      ? documented.request
      : documented.request === null
        ? observed.request
        : {
            contentType: observed.request.contentType,
            shape:
              observed.request.contentType === documented.request.contentType
                ? mergeOptional(documented.request.shape, observed.request.shape)
                : observed.request.shape,
          };
  const responses = new Map(documented.responses.map((r) => [r.status, r]));
  for (const seen of observed.responses) {
    const before = responses.get(seen.status);
    responses.set(
      seen.status,
      before === undefined
        ? seen
        : {
            status: seen.status,
            contentType: seen.contentType ?? before.contentType,
            shape: seen.contentType === before.contentType ? mergeOptional(before.shape, seen.shape) : seen.shape,
          },
    );
  }
  const parameters = extendParameters(documented.parameters, observed.parameters);
  return {
    request,
    responses: [...responses.values()].sort((a, b) => a.status - b.status),
    ...(parameters === undefined ? {} : { parameters }),
  };
}

/** What nothing documented looks like: extending it documents what was observed (parameters as optional). */
export const NOTHING_DOCUMENTED: EndpointShapes = Object.freeze({ request: null, responses: [] });

/**
 * The same endpoint with every body shape and its parameters left out (documented without
 * bodies: the endpoint's existence, statuses and media types only).
 */
export function withoutBodies(shapes: EndpointShapes): EndpointShapes {
  return {
    request: shapes.request && { contentType: shapes.request.contentType, shape: null },
    responses: shapes.responses.map((r) => ({ ...r, shape: null })),
  };
}
