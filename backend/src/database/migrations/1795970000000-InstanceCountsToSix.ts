import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Instance counts go up to six (issue 14, docs/shapes.md "Required fields"): once a body varied,
 * documentation claims a field `required` only where six objects all had it (four before), so an
 * observation row's `request_instances` / `response_instances` digits (objects beyond one per
 * exchange) now go up to 5, and a row keeps them until it counts six exchanges. `add_instances`
 * (the batch statement's upsert; `sum_instances`, its aggregate, follows it) adds digit by digit up
 * to 5 instead of 3. Texts already stored (digits up to 3) stay valid. `down` caps them at 3 again.
 */
export class InstanceCountsToSix1795970000000 implements MigrationInterface {
  name = 'InstanceCountsToSix1795970000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(addInstances(5));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(addInstances(3));
    for (const column of ['request_instances', 'response_instances'])
      await q.query(`UPDATE observations SET ${column} = translate(${column}, '45', '33') WHERE ${column} ~ '[45]'`);
  }
}

function addInstances(most: number): string {
  return `
    CREATE OR REPLACE FUNCTION add_instances(a text, b text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE WHEN a IS NULL OR a = '' THEN b WHEN b IS NULL OR b = '' THEN a
             ELSE (SELECT string_agg(least(coalesce(nullif(substr(a, i, 1), ''), '0')::int
                                           + coalesce(nullif(substr(b, i, 1), ''), '0')::int, ${most})::text, '' ORDER BY i)
                     FROM generate_series(1, greatest(length(a), length(b))) AS i) END
    $$`;
}
