import {
  claimRequired,
  type EndpointShapes,
  extendParameters,
  mergeAllShapes,
  mergeCountedShapes,
  type Shape,
  withoutInstances,
} from '@spectator/shared';

/** How two bodies' shapes become one, and what a body only the second side has becomes. */
interface BodyRules {
  merge(before: Shape, seen: Shape): Shape;
  /** @param status the answer's status; undefined for a request body */
  fresh(seen: Shape, status?: number): Shape;
}

function mergeOptional(a: Shape | null, b: Shape | null, rules: BodyRules, status?: number): Shape | null {
  if (b === null) return a;
  if (a === null) return rules.fresh(b, status);
  return rules.merge(a, b);
}

function freshOptional(shape: Shape | null, rules: BodyRules, status?: number): Shape | null {
  return shape === null ? null : rules.fresh(shape, status);
}

/**
 * Observed behaviour becoming documentation: a body documented for the first time is claimed from
 * its instance counts (`claimRequired`: a varying body's field is `required` only once six objects
 * all had it, an error answer's never from one object); merged into a documented body it counts as
 * presence (a documented required field stays required unless some observed object lacked it).
 */
const DOCUMENTING: BodyRules = {
  merge: (before, seen) => mergeAllShapes([before, withoutInstances(seen)]),
  fresh: (seen, status) => claimRequired(seen, status !== undefined && status >= 400 ? 'error' : 'other'),
};

/** Observed behaviour merged with observed behaviour: objects add up their instance counts. */
const OBSERVING: BodyRules = {
  merge: mergeCountedShapes,
  fresh: (seen) => seen,
};

function extendWith(documented: EndpointShapes, observed: EndpointShapes, rules: BodyRules): EndpointShapes {
  const request =
    observed.request === null
      ? documented.request
      : documented.request === null
        ? { contentType: observed.request.contentType, shape: freshOptional(observed.request.shape, rules) }
        : {
            contentType: observed.request.contentType,
            shape:
              observed.request.contentType === documented.request.contentType
                ? mergeOptional(documented.request.shape, observed.request.shape, rules)
                : freshOptional(observed.request.shape, rules),
          };
  const responses = new Map(documented.responses.map((r) => [r.status, r]));
  for (const seen of observed.responses) {
    const before = responses.get(seen.status);
    responses.set(
      seen.status,
      before === undefined
        ? { ...seen, shape: freshOptional(seen.shape, rules, seen.status) }
        : {
            status: seen.status,
            contentType: seen.contentType ?? before.contentType,
            shape:
              seen.contentType === before.contentType
                ? mergeOptional(before.shape, seen.shape, rules, seen.status)
                : freshOptional(seen.shape, rules, seen.status),
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

/**
 * Documented behaviour extended by newly observed behaviour (`observedEndpointShapes`): shapes
 * merged (so what was documented stays accepted), new status codes added, observed parameters
 * added as optional (`extendParameters`). The observed content type wins where they differ. A
 * body documented for the first time takes its `required` claims from the observed instance
 * counts (`claimRequired`, docs/shapes.md); the result carries no counts.
 */
export function extendEndpointShapes(documented: EndpointShapes, observed: EndpointShapes): EndpointShapes {
  return extendWith(documented, observed, DOCUMENTING);
}

/**
 * Two endpoints' observed behaviour as one (literal copies regrouped under a template): merged as
 * `extendEndpointShapes` merges, but objects add up their instance counts and nothing is claimed
 * yet, so documenting the result claims from everything the copies showed.
 */
export function mergeObservedEndpointShapes(a: EndpointShapes, b: EndpointShapes): EndpointShapes {
  return extendWith(a, b, OBSERVING);
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
