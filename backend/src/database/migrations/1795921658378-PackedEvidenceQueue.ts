import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A queued batch's lists (exchanges, runtime minutes, consumer days) stored as tables, not as
 * arrays of objects repeating every field name (issue 20; evidence/queued-payload.ts): the first
 * element the field names, `method` and `path` first, then each item's values in that order.
 * The columns become `text` (PostgreSQL keeps the JSON as written instead of parsing it to check it)
 * and are renamed (`exchanges` → `packed_exchanges`, …), so a replica of an older version
 * still running beside a newer one fails loudly instead of misreading: its batches' statement and
 * its folds error out and are retried (the agent resends; the batch stays queued) by a newer one.
 * Batches queued before are converted in place, so none is lost across the upgrade; `down`
 * converts them back.
 */
const COLUMNS = [
  ['exchanges', 'packed_exchanges'],
  ['minutes', 'packed_minutes'],
  ['consumers', 'packed_consumers'],
] as const;

/** A list of objects (column `c`) as a table: field names (method, path, then the first item's others), then values. */
const packed = (c: string): string => `
  CASE WHEN json_array_length(${c}) = 0 THEN '[]'::json ELSE (
    WITH fields AS (
      SELECT f.name, f.i FROM unnest(ARRAY['method', 'path'] || ARRAY(
        SELECT k FROM json_object_keys(${c}->0) AS k WHERE k NOT IN ('method', 'path'))) WITH ORDINALITY AS f(name, i))
    SELECT json_agg(t.v ORDER BY t.n) FROM (
      SELECT 0::bigint AS n, (SELECT json_agg(name ORDER BY i) FROM fields) AS v
      UNION ALL
      SELECT e.n, (SELECT json_agg(e.x->fields.name ORDER BY fields.i) FROM fields)
        FROM json_array_elements(${c}) WITH ORDINALITY AS e(x, n)) t)
  END`;

/** A table (column `c`) as the list of objects it packs. */
const unpacked = (c: string): string => `
  coalesce((SELECT json_agg((SELECT json_object_agg(f.name, e.x->(f.i::int - 1)) FROM json_array_elements_text(${c}->0) WITH ORDINALITY AS f(name, i)) ORDER BY e.n)
              FROM json_array_elements(${c}) WITH ORDINALITY AS e(x, n) WHERE e.n > 1), '[]'::json)`;

export class PackedEvidenceQueue1795921658378 implements MigrationInterface {
  name = 'PackedEvidenceQueue1795921658378';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE evidence_queue SET ${COLUMNS.map(([old]) => `${old} = ${packed(old)}`).join(', ')}`);
    await q.query(`ALTER TABLE evidence_queue ALTER COLUMN consumers DROP DEFAULT`);
    for (const [old, name] of COLUMNS) {
      await q.query(`ALTER TABLE evidence_queue ALTER COLUMN ${old} TYPE text`);
      await q.query(`ALTER TABLE evidence_queue RENAME COLUMN ${old} TO ${name}`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [old, name] of COLUMNS) {
      await q.query(`ALTER TABLE evidence_queue RENAME COLUMN ${name} TO ${old}`);
      await q.query(`ALTER TABLE evidence_queue ALTER COLUMN ${old} TYPE json USING ${old}::json`);
    }
    await q.query(`UPDATE evidence_queue SET ${COLUMNS.map(([old]) => `${old} = ${unpacked(old)}`).join(', ')}`);
    await q.query(`ALTER TABLE evidence_queue ALTER COLUMN consumers SET DEFAULT '[]'::json`);
  }
}
