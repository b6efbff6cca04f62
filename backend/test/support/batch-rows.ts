import type { AggregatedRow } from '../../src/captures/batch-statement';

/** A folded batch row of `GET path` answered 200 with no bodies or names, once now; `overrides` set the rest. */
export function aggregatedRow(path: string, overrides: Partial<AggregatedRow> = {}): AggregatedRow {
  const now = new Date().toISOString();
  return {
    method: 'GET',
    path,
    status: 200,
    req_ct: null,
    req_fp: null,
    req_note: null,
    res_ct: null,
    res_fp: null,
    res_note: null,
    query: [],
    req_h: [],
    res_h: [],
    count: 1,
    first_seen: now,
    last_seen: now,
    ...overrides,
  };
}
