import type { ChangeKind } from '../api/types';
import type { Shape } from '../shape/types';
import { compareShapes } from './compare';
import { parameterChanges } from './parameters';
import type { Direction, EndpointShapes, ShapeChange } from './types';

const NOTHING_KNOWN: Shape = { kind: 'unknown' };
const OPPOSITE: Readonly<Record<Direction, Direction>> = { request: 'response', response: 'request' };
/** What a change found from `after` to `before` is called from `before` to `after`. */
const REVERSED: Partial<Record<ChangeKind, ChangeKind>> = {
  added: 'removed',
  removed: 'added',
  'now optional': 'now required',
};

/**
 * Changes from `documented` to `observed`: what the observed shape does that the documented one
 * does not allow, at JSON paths (`$`, `$.author`, `$.items[].id`; the options of a oneOf are
 * compared at the path of the oneOf), classified breaking or not from the consumer's point of
 * view for `direction` (table in docs/shapes.md). Empty exactly when `observed` conforms.
 */
export function diffShapes(documented: Shape, observed: Shape, direction: Direction, status?: number): ShapeChange[] {
  const changes: ShapeChange[] = [];
  compareShapes(documented, observed, direction, (change) => {
    changes.push(status === undefined ? { ...change, in: direction } : { ...change, in: direction, status });
    return false;
  });
  return changes;
}

/**
 * Changes between two documented versions of a body (a proposal's planned shape against the
 * current one): what `after` allows that `before` did not ({@link diffShapes}), and what `before`
 * allowed that `after` no longer does. The second half is `diffShapes(after, before)` read from
 * the other side, because narrowing a request is to clients what widening a response is: a field
 * made required in a request (`now required`) or a type no longer accepted breaks; an optional
 * response field dropped (`removed`) or made required (`now required`), or a response type
 * narrowed, does not. `documented` holds the `before` shape, `observed` the `after` one. A change
 * found both ways is listed once, breaking if either way says so. Empty exactly when each of the
 * two conforms to the other.
 */
export function diffVersions(before: Shape, after: Shape, direction: Direction, status?: number): ShapeChange[] {
  const changes = diffShapes(before, after, direction, status);
  const byKey = new Map(changes.map((change) => [`${change.change} ${change.at}`, change]));
  for (const narrowed of diffShapes(after, before, OPPOSITE[direction])) {
    const kind = REVERSED[narrowed.change] ?? narrowed.change;
    const same = byKey.get(`${kind} ${narrowed.at}`);
    if (same !== undefined) {
      same.breaking ||= narrowed.breaking;
      continue;
    }
    const change: ShapeChange = {
      change: kind,
      in: direction,
      ...(status === undefined ? {} : { status }),
      at: narrowed.at,
      ...(narrowed.observed === undefined ? {} : { documented: narrowed.observed }),
      ...(narrowed.documented === undefined ? {} : { observed: narrowed.documented }),
      breaking: narrowed.breaking,
    };
    changes.push(change);
    byKey.set(`${kind} ${narrowed.at}`, change);
  }
  return changes;
}

/**
 * Changes of a whole endpoint: its query parameters and request headers, the request body, then
 * each observed response status.
 * - Parameters are compared only when both sides list them ({@link parameterChanges}): a new name
 *   is `added`, a documented required one not always sent is `now optional`; neither breaks.
 * - A request body where none was documented is `added` at `$` (breaking: the server may now
 *   need it); a documented one no longer sent is `removed` (not breaking: the server does without).
 * - A status code not documented is `new status`: breaking for 1xx–3xx (a client written for the
 *   documented success receives something else), not for 4xx/5xx (errors clients already handle).
 *   A documented status not observed is no change: the traffic may simply not have produced it.
 * - A different media type (parameters and letter case aside) is `new content type`, breaking.
 * - Otherwise the bodies are compared with {@link diffShapes}; a body without a recorded shape
 *   counts as `unknown`.
 */
export function diffEndpoint(documented: EndpointShapes, observed: EndpointShapes): ShapeChange[] {
  const changes = parameterChanges(documented.parameters, observed.parameters);
  const documentedRequest = documented.request;
  const observedRequest = observed.request;
  if (documentedRequest === null && observedRequest !== null) {
    changes.push({ change: 'added', in: 'request', at: '$', ...observedShape(observedRequest.shape), breaking: true });
  } else if (documentedRequest !== null && observedRequest === null) {
    changes.push({
      change: 'removed',
      in: 'request',
      at: '$',
      ...documentedShape(documentedRequest.shape),
      breaking: false,
    });
  } else if (documentedRequest !== null && observedRequest !== null) {
    changes.push(...bodyChanges(documentedRequest, observedRequest, 'request'));
  }
  for (const response of observed.responses) {
    const sameStatus = documented.responses.filter((candidate) => candidate.status === response.status);
    if (sameStatus.length === 0) {
      changes.push({
        change: 'new status',
        in: 'response',
        status: response.status,
        at: '$',
        ...observedShape(response.shape),
        breaking: response.status < 400,
      });
    } else {
      // A status may be documented with several media types; compare with the one that matches.
      const observedType = mediaType(response.contentType);
      const documentedResponse =
        sameStatus.find((candidate) => mediaType(candidate.contentType) === observedType) ?? sameStatus[0]!;
      changes.push(...bodyChanges(documentedResponse, response, 'response', response.status));
    }
  }
  return changes;
}

interface Body {
  contentType: string | null;
  shape: Shape | null;
}

function bodyChanges(documented: Body, observed: Body, direction: Direction, status?: number): ShapeChange[] {
  const documentedType = mediaType(documented.contentType);
  const observedType = mediaType(observed.contentType);
  if (documentedType !== observedType) {
    return [
      {
        change: 'new content type',
        in: direction,
        ...(status === undefined ? {} : { status }),
        at: '$',
        ...documentedShape(documented.shape),
        ...observedShape(observed.shape),
        contentTypes: { documented: documentedType, observed: observedType },
        breaking: true,
      },
    ];
  }
  return diffShapes(documented.shape ?? NOTHING_KNOWN, observed.shape ?? NOTHING_KNOWN, direction, status);
}

/** `type/subtype` in lower case, without parameters; null for no body. */
function mediaType(contentType: string | null): string | null {
  if (contentType === null) return null;
  return contentType.split(';', 1)[0]!.trim().toLowerCase();
}

function documentedShape(shape: Shape | null): { documented?: Shape } {
  return shape === null ? {} : { documented: shape };
}

function observedShape(shape: Shape | null): { observed?: Shape } {
  return shape === null ? {} : { observed: shape };
}
