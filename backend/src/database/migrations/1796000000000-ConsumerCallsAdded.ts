import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consumer calls a fold adds wait in `consumer_calls_added` (issue 20, session 32): one row per
 * fold and key (environment row, endpoint, status, day) with the calls of the consumers that fold
 * counted only, inserted without reading anything. A fold read and locked every key it touched and
 * rewrote the key's whole map (the scale bench's ~42 consumers, ~2.4 KB of jsonb) to change the
 * few its batches named: under capacity the folds' costliest statements. Every read adds the rows
 * waiting here to `consumer_calls`; now and then a fold of the row merges its waiting rows into
 * the row's keys there (`ConsumersRepository.compact`, where the bound of named consumers a key
 * keeps is applied). One index: by project, environment kind and endpoint, which every read and
 * the compaction (project, kind, then the row) use. No foreign keys (a check per row inserted):
 * the hourly prune drops the rows of projects deleted since.
 */
export class ConsumerCallsAdded1796000000000 implements MigrationInterface {
  name = 'ConsumerCallsAdded1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE consumer_calls_added (
        project_id uuid NOT NULL,
        row_id uuid NOT NULL,
        environment_kind text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        status integer NOT NULL,
        day date NOT NULL,
        consumers jsonb NOT NULL
      )`);
    await q.query(
      `CREATE INDEX consumer_calls_added_endpoint
         ON consumer_calls_added (project_id, environment_kind, method, path, status)`,
    );
  }

  /** The rows waiting are added to their keys' (every named consumer kept, as they were read). */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO consumer_calls AS c (project_id, row_id, method, path, status, day, environment_kind, consumers)
      SELECT project_id, row_id, method, path, status, day, min(environment_kind),
             jsonb_object_agg(consumer, jsonb_build_array(calls, at))
        FROM (SELECT a.project_id, a.row_id, a.environment_kind, a.method, a.path, a.status, a.day, e.key AS consumer,
                     sum((e.value->>0)::bigint) AS calls, max((e.value->>1)::bigint) AS at
                FROM consumer_calls_added a CROSS JOIN LATERAL jsonb_each(a.consumers) e
               WHERE EXISTS (SELECT 1 FROM environment_rows r WHERE r.project_id = a.project_id AND r.id = a.row_id)
               GROUP BY 1, 2, 3, 4, 5, 6, 7, 8) s
       GROUP BY project_id, row_id, method, path, status, day
      ON CONFLICT (project_id, row_id, method, path, status, day) DO UPDATE SET consumers = c.consumers || (
        SELECT jsonb_object_agg(n.key, CASE WHEN c.consumers ? n.key
                 THEN jsonb_build_array((c.consumers->n.key->>0)::bigint + (n.value->>0)::bigint,
                                        greatest((c.consumers->n.key->>1)::bigint, (n.value->>1)::bigint))
                 ELSE n.value END)
          FROM jsonb_each(EXCLUDED.consumers) n)`);
    await q.query('DROP TABLE consumer_calls_added');
  }
}
