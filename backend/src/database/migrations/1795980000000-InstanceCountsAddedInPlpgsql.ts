import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `add_instances` (the batch statement's upsert adds an observation row's instance extras with it;
 * `sum_instances`, its aggregate, follows it) in PL/pgSQL (issue 20). As an SQL function with a
 * sub-SELECT it could not be inlined, so each call ran its query through the executor afresh:
 * planned on every call (`pg_stat_statements` counted ~1,000 plans of it in one medium scale
 * bench's evidence phase, session 23). PL/pgSQL evaluates its simple expressions without the
 * planner after the first call of a session. Same results: digit by digit, a missing digit read as
 * 0, each sum capped at 5, an empty or null side gives the other. `down` puts the SQL function back.
 */
export class InstanceCountsAddedInPlpgsql1795980000000 implements MigrationInterface {
  name = 'InstanceCountsAddedInPlpgsql1795980000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION add_instances(a text, b text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        DECLARE
          added text := '';
        BEGIN
          IF a IS NULL OR a = '' THEN RETURN b; END IF;
          IF b IS NULL OR b = '' THEN RETURN a; END IF;
          FOR i IN 1 .. greatest(length(a), length(b)) LOOP
            added := added || least(coalesce(nullif(substr(a, i, 1), ''), '0')::int
                                    + coalesce(nullif(substr(b, i, 1), ''), '0')::int, 5)::text;
          END LOOP;
          RETURN added;
        END
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION add_instances(a text, b text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN a IS NULL OR a = '' THEN b WHEN b IS NULL OR b = '' THEN a
               ELSE (SELECT string_agg(least(coalesce(nullif(substr(a, i, 1), ''), '0')::int
                                             + coalesce(nullif(substr(b, i, 1), ''), '0')::int, 5)::text, '' ORDER BY i)
                       FROM generate_series(1, greatest(length(a), length(b))) AS i) END
      $$`);
  }
}
