import {
  addInstanceExtras,
  addTopInstances,
  countInstances,
  type EndpointShapes,
  mergeCountedShapes,
  observedParameters,
  type Shape,
} from '@spectator/shared';

/** One aggregated observation row as the views read it. */
export interface ObservationRow {
  method: string;
  path: string;
  status: number;
  requestContentType: string | null;
  requestShape: string | null;
  responseContentType: string | null;
  responseShape: string | null;
  count: number;
  /**
   * Query parameter and request header names of the row's exchanges (never values). Absent when
   * read without them (then parameters are neither shown nor compared).
   */
  query?: string[] | null;
  requestHeaders?: string[] | null;
  /**
   * The bodies' instance extras (`instanceExtras`: objects beyond one per exchange and place, which
   * the fingerprint leaves out); null or absent for none, or when read without them (then each
   * exchange counts one object per place).
   */
  requestInstances?: string | null;
  responseInstances?: string | null;
}

/** Columns of an `observations o` row, as `ObservationRow` fields (`count` aside: callers sum or cast it). */
export const ROW_COLUMNS = `o.method, o.path, o.status,
  o.request_content_type AS "requestContentType", o.request_shape AS "requestShape",
  o.response_content_type AS "responseContentType", o.response_shape AS "responseShape",
  o.query, o.request_headers AS "requestHeaders"`;

/** Columns of an `observations o` row's instance extras, as `ObservationRow` fields (observation rows only). */
export const INSTANCE_COLUMNS = `o.request_instances AS "requestInstances", o.response_instances AS "responseInstances"`;

/** The most frequent value by count (ties: the first seen). */
function mostFrequent(entries: ReadonlyArray<{ value: string; count: number }>): string | null {
  const totals = new Map<string, number>();
  for (const { value, count } of entries) totals.set(value, (totals.get(value) ?? 0) + count);
  let best: string | null = null;
  let bestCount = -1;
  for (const [value, total] of totals) {
    if (total > bestCount) {
      best = value;
      bestCount = total;
    }
  }
  return best;
}

/**
 * The merge of the shapes behind some fingerprints, each with the exchanges of its rows and their
 * instance extras; `null` when none of them is shaped. Objects count their instances
 * (`countInstances`: one per exchange and place, plus the extras the rows carry beside the
 * fingerprint, added up exactly), for the documentation's required claim (`claimRequired`);
 * exchanges counted without a shape (sampled out under load) add one object each at the top.
 */
function mergedShape(
  bodies: ReadonlyArray<{ fingerprint: string | null; count: number; extras: string | null | undefined }>,
  shapes: ReadonlyMap<string, Shape>,
): Shape | null {
  const exchanges = new Map<string, { count: number; extras: string }>();
  let unshaped = 0;
  for (const { fingerprint, count, extras } of bodies)
    if (fingerprint !== null && shapes.has(fingerprint)) {
      const before = exchanges.get(fingerprint);
      exchanges.set(fingerprint, {
        count: (before?.count ?? 0) + count,
        extras: addInstanceExtras(before?.extras ?? '', extras ?? ''),
      });
    } else unshaped += count;
  let merged: Shape | null = null;
  for (const [fingerprint, { count, extras }] of exchanges) {
    const shape = countInstances(shapes.get(fingerprint) as Shape, count, extras);
    merged = merged === null ? shape : mergeCountedShapes(merged, shape);
  }
  return merged === null ? null : addTopInstances(merged, unshaped);
}

/**
 * Did the API accept the exchange (2xx/3xx)? Only accepted exchanges say what a request may look
 * like: a 4xx answered a request the API refused (a bad `author`), a 5xx one it failed on.
 */
export function acceptedStatus(status: number): boolean {
  return status >= 200 && status < 400;
}

/** A request body of 4xx exchanges: the client's mistake, shown for review, never documented. */
export function rejectedStatus(status: number): boolean {
  return status >= 400 && status < 500;
}

/** The request body of some rows: the most frequent content type, the merge of its shapes; null when none has a body. */
function requestBodyOf(
  rows: readonly ObservationRow[],
  shapes: ReadonlyMap<string, Shape>,
): { contentType: string; shape: Shape | null } | null {
  const withRequest = rows.filter((row) => row.requestContentType !== null);
  const contentType = mostFrequent(
    withRequest.map((row) => ({ value: row.requestContentType as string, count: row.count })),
  );
  if (contentType === null) return null;
  return {
    contentType,
    shape: mergedShape(
      withRequest
        .filter((row) => row.requestContentType === contentType)
        .map((row) => ({ fingerprint: row.requestShape, count: row.count, extras: row.requestInstances })),
      shapes,
    ),
  };
}

/**
 * What some observation rows of one endpoint say it looks like: the request body of the accepted
 * exchanges (`acceptedStatus`: most frequent content type, merged shapes, objects counting their
 * instances: `extendEndpointShapes` claims `required` from them), one response per status
 * code, sorted by status, and the query parameters and documentable request headers
 * (`observedParameters`: required where every row has the name; absent when the rows were read
 * without names).
 */
export function observedEndpointShapes(
  rows: readonly ObservationRow[],
  shapes: ReadonlyMap<string, Shape>,
): EndpointShapes {
  const request = requestBodyOf(
    rows.filter((row) => acceptedStatus(row.status)),
    shapes,
  );

  const byStatus = new Map<number, ObservationRow[]>();
  for (const row of rows) byStatus.set(row.status, [...(byStatus.get(row.status) ?? []), row]);
  const responses = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, group]) => {
      const withBody = group.filter((row) => row.responseContentType !== null);
      const contentType = mostFrequent(
        withBody.map((row) => ({ value: row.responseContentType as string, count: row.count })),
      );
      const shape =
        contentType === null
          ? null
          : mergedShape(
              withBody
                .filter((row) => row.responseContentType === contentType)
                .map((row) => ({ fingerprint: row.responseShape, count: row.count, extras: row.responseInstances })),
              shapes,
            );
      return { status, contentType, shape };
    });
  const parameters = observedParameters(rows);
  return { request, responses, ...(parameters === undefined ? {} : { parameters }) };
}

/** Fingerprints referenced by some rows. */
export function fingerprintsOf(rows: readonly ObservationRow[]): string[] {
  const set = new Set<string>();
  for (const row of rows) {
    if (row.requestShape !== null) set.add(row.requestShape);
    if (row.responseShape !== null) set.add(row.responseShape);
  }
  return [...set];
}

/** The request bodies of the rejected (4xx) exchanges of some rows of one endpoint, per status, sorted by status. */
export function rejectedRequests(
  rows: readonly ObservationRow[],
  shapes: ReadonlyMap<string, Shape>,
): Array<{ status: number; interactions: number; contentType: string; shape: Shape | null }> {
  const byStatus = new Map<number, ObservationRow[]>();
  for (const row of rows)
    if (rejectedStatus(row.status) && row.requestContentType !== null)
      byStatus.set(row.status, [...(byStatus.get(row.status) ?? []), row]);
  return [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, group]) => ({
      status,
      interactions: group.reduce((sum, row) => sum + row.count, 0),
      ...(requestBodyOf(group, shapes) as { contentType: string; shape: Shape | null }),
    }));
}
