/**
 * How a queued batch's lists (its exchanges, runtime minutes and consumer days) are stored in
 * `evidence_queue` (issue 20): each as a table, not as objects that repeat every field name. A
 * list's JSON is an array whose first element is its items' field names, `method` and `path`
 * first (the batch statement's cap filter and regrouping read them by position, `x->>0` and
 * `x->>1`), and every further element one item's values in that order; an empty list is `[]`.
 * The scale bench's 40-row batch is 22 KB of JSON this way against 37 KB as objects. The columns
 * are `text`: PostgreSQL keeps the replicas' JSON as it is (a `json` column parses it to check it,
 * which cost more than the rest of the insert); only the cap filter and regrouping parse it.
 * Items of one list share their fields (each list's items are made by one object literal).
 */

/** A list (of any records naming their endpoint) packed as a table: the column's JSON. */
export function packList<T extends { method: string; path: string }>(items: readonly T[]): string {
  const first = items[0];
  if (first === undefined) return '[]';
  const fields = ['method', 'path', ...Object.keys(first).filter((field) => field !== 'method' && field !== 'path')];
  const table: unknown[][] = [fields];
  for (const item of items) {
    const record = item as Record<string, unknown>;
    table.push(fields.map((field) => record[field]));
  }
  return JSON.stringify(table);
}

/**
 * Rows packed as `packList` packs the items they stand for, in one pass with no object per item:
 * `fields` (`method` and `path` first), then each row's values in that order as `valuesOf` gives
 * them; `[]` when there is none.
 */
export function packedTable<T>(fields: readonly string[], rows: Iterable<T>, valuesOf: (row: T) => unknown[]): string {
  const table: unknown[] = [fields];
  for (const row of rows) table.push(valuesOf(row));
  return table.length === 1 ? '[]' : JSON.stringify(table);
}

/** A packed list (the column's JSON text) as its items again. */
export function unpackList<T>(json: string): T[] {
  const table = JSON.parse(json) as unknown[];
  const fields = table[0] as string[] | undefined;
  if (fields === undefined) return [];
  const items: T[] = [];
  for (let i = 1; i < table.length; i++) {
    const values = table[i] as unknown[];
    const item: Record<string, unknown> = {};
    for (let f = 0; f < fields.length; f++) item[fields[f] as string] = values[f];
    items.push(item as T);
  }
  return items;
}
