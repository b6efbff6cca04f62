import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Instance counts beside the fingerprint (issue 14, docs/shapes.md "Instance counts"): a shape's
 * fingerprint no longer holds how many objects a body had at each place, so a list of one record and
 * a list of three are one observation row. The row keeps what its exchanges showed beyond one object
 * per place and exchange (`instanceExtras`: digits 0-3, one per object place of the shape; NULL for
 * none, and once the row counts four exchanges): `request_instances`, `response_instances`.
 * `add_instances` adds two such texts digit by digit up to 3 (what the batch statement's upsert does
 * on conflict), `sum_instances` is its aggregate (regrouping folds moved rows with it).
 */
export class InstanceCountsBeside1795931676888 implements MigrationInterface {
  name = 'InstanceCountsBeside1795931676888';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE observations ADD COLUMN request_instances text, ADD COLUMN response_instances text`);
    await q.query(`
      CREATE FUNCTION add_instances(a text, b text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN a IS NULL OR a = '' THEN b WHEN b IS NULL OR b = '' THEN a
               ELSE (SELECT string_agg(least(coalesce(nullif(substr(a, i, 1), ''), '0')::int
                                             + coalesce(nullif(substr(b, i, 1), ''), '0')::int, 3)::text, '' ORDER BY i)
                       FROM generate_series(1, greatest(length(a), length(b))) AS i) END
      $$`);
    await q.query(`CREATE AGGREGATE sum_instances(text) (SFUNC = add_instances, STYPE = text)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP AGGREGATE sum_instances(text)`);
    await q.query(`DROP FUNCTION add_instances(text, text)`);
    await q.query(`ALTER TABLE observations DROP COLUMN request_instances, DROP COLUMN response_instances`);
  }
}
