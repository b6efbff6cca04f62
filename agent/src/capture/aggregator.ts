import type { Shape, WireObservation } from '@spectator/shared';
import type { BodySummary } from './summarise';

/** One interaction, reduced to what may leave the process. */
export interface Observation {
  captureId: string;
  method: string;
  template: string;
  status: number;
  query: readonly string[];
  requestHeaders: readonly string[];
  responseHeaders: readonly string[];
  request: BodySummary | null;
  response: BodySummary | null;
  at: number;
}

/** The rows of one capture since the last drain, with every shape they reference. */
export interface CaptureRows {
  captureId: string;
  observations: WireObservation[];
  shapes: Map<string, Shape>;
}

interface Row {
  observation: WireObservation;
  firstSeen: number;
  lastSeen: number;
  query: Set<string>;
  requestHeaders: Set<string>;
  responseHeaders: Set<string>;
}

/**
 * Counts interactions per (capture, method, template, status, request body, response body), where
 * a body is its media type, shape fingerprint and flags; query and header names are unioned into
 * the row, with first and last seen.
 */
export class Aggregator {
  private captures = new Map<string, Map<string, Row>>();
  private shapes = new Map<string, Shape>();
  private rowCount = 0;

  /** Distinct rows waiting to be drained. */
  get size(): number {
    return this.rowCount;
  }

  add(o: Observation): void {
    const key = `${o.method} ${o.template} ${o.status} ${o.request?.key ?? '-'} ${o.response?.key ?? '-'}`;
    let rows = this.captures.get(o.captureId);
    if (!rows) this.captures.set(o.captureId, (rows = new Map()));
    let row = rows.get(key);
    if (!row) {
      row = {
        observation: { method: o.method, path: o.template, status: o.status, query: [], requestHeaders: [], responseHeaders: [], request: o.request?.body ?? null, response: o.response?.body ?? null, count: 0, firstSeen: '', lastSeen: '' },
        firstSeen: o.at,
        lastSeen: o.at,
        query: new Set(),
        requestHeaders: new Set(),
        responseHeaders: new Set(),
      };
      rows.set(key, row);
      this.rowCount++;
    }
    row.observation.count++;
    if (o.at > row.lastSeen) row.lastSeen = o.at;
    for (const name of o.query) row.query.add(name);
    for (const name of o.requestHeaders) row.requestHeaders.add(name);
    for (const name of o.responseHeaders) row.responseHeaders.add(name);
    // Only shaped bodies carry a shape (a few per second under load): the rest skip this.
    if (o.request?.shape && o.request.body.shape) this.shapes.set(o.request.body.shape, o.request.shape);
    if (o.response?.shape && o.response.body.shape) this.shapes.set(o.response.body.shape, o.response.shape);
  }

  /** Take every row, grouped by capture, each group with the shapes its rows reference. */
  drain(): CaptureRows[] {
    const out: CaptureRows[] = [];
    for (const [captureId, rows] of this.captures) {
      const shapes = new Map<string, Shape>();
      const observations: WireObservation[] = [];
      for (const row of rows.values()) {
        row.observation.firstSeen = new Date(row.firstSeen).toISOString();
        row.observation.lastSeen = new Date(row.lastSeen).toISOString();
        row.observation.query = [...row.query].sort();
        row.observation.requestHeaders = [...row.requestHeaders].sort();
        row.observation.responseHeaders = [...row.responseHeaders].sort();
        observations.push(row.observation);
        for (const body of [row.observation.request, row.observation.response]) {
          const shape = body?.shape ? this.shapes.get(body.shape) : undefined;
          if (body?.shape && shape) shapes.set(body.shape, shape);
        }
      }
      out.push({ captureId, observations, shapes });
    }
    this.captures = new Map();
    this.shapes = new Map();
    this.rowCount = 0;
    return out;
  }
}
