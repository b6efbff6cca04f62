import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consumer calls in one row per environment row, endpoint, status and day (issue 20): `consumers`
 * maps each consumer of that key (a pseudonym, `*` for every call, `+` for calls of consumers past
 * a bound) to `[calls, last call in epoch milliseconds]`. There was one row per consumer: a fold of
 * the scale bench's production build wrote ~1,100 of them (every endpoint ends up with all 40
 * callers), the fold's costliest statement. Now it writes one per key it touches, merged in Node.
 * The last call keeps milliseconds, as every answer gives it.
 */
/** Renames the table and the indexes whose names the new one takes, until it is dropped. */
async function setAside(q: QueryRunner, name: string): Promise<void> {
  await q.query(`ALTER TABLE consumer_calls RENAME TO ${name}`);
  for (const index of ['pkey', 'day_idx', 'endpoint_idx'])
    await q.query(`ALTER INDEX consumer_calls_${index} RENAME TO ${name}_${index}`);
}

export class ConsumerCallsPerKey1795901374861 implements MigrationInterface {
  name = 'ConsumerCallsPerKey1795901374861';

  async up(q: QueryRunner): Promise<void> {
    await setAside(q, 'consumer_calls_per_consumer');
    await q.query(`
      CREATE TABLE consumer_calls (
        project_id uuid NOT NULL CONSTRAINT consumer_calls_project_id_fkey REFERENCES projects(id) ON DELETE CASCADE,
        row_id uuid NOT NULL,
        environment_kind text NOT NULL
          CONSTRAINT consumer_calls_environment_kind_check CHECK (environment_kind IN ('ci', 'staging', 'production')),
        method text NOT NULL,
        path text NOT NULL,
        status integer NOT NULL,
        day date NOT NULL,
        consumers jsonb NOT NULL CHECK (jsonb_typeof(consumers) = 'object'),
        PRIMARY KEY (project_id, row_id, method, path, status, day),
        CONSTRAINT consumer_calls_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id)
          ON DELETE CASCADE
      ) WITH (fillfactor = 70)`);
    await q.query(`
      INSERT INTO consumer_calls (project_id, row_id, environment_kind, method, path, status, day, consumers)
      SELECT project_id, row_id, min(environment_kind), method, path, status, day,
             jsonb_object_agg(consumer, jsonb_build_array(calls, floor(extract(epoch FROM last_call) * 1000)::bigint))
        FROM consumer_calls_per_consumer
       GROUP BY project_id, row_id, method, path, status, day`);
    await q.query('DROP TABLE consumer_calls_per_consumer');
    // Retention deletes by day; an environment's consumers read its rows by day, one endpoint's by endpoint.
    await q.query('CREATE INDEX consumer_calls_day_idx ON consumer_calls (day)');
    await q.query('CREATE INDEX consumer_calls_kind_day_idx ON consumer_calls (project_id, environment_kind, day)');
    await q.query(
      'CREATE INDEX consumer_calls_endpoint_idx ON consumer_calls (project_id, environment_kind, method, path, status)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await setAside(q, 'consumer_calls_per_key');
    await q.query(`
      CREATE TABLE consumer_calls (
        project_id uuid NOT NULL CONSTRAINT consumer_calls_project_id_fkey REFERENCES projects(id) ON DELETE CASCADE,
        environment_kind text NOT NULL
          CONSTRAINT consumer_calls_environment_kind_check CHECK (environment_kind IN ('ci', 'staging', 'production')),
        method text NOT NULL,
        path text NOT NULL,
        status integer NOT NULL,
        consumer text NOT NULL CHECK (consumer ~ '^([0-9a-f]{16}|[*+])$'),
        day date NOT NULL,
        calls bigint NOT NULL,
        last_call timestamptz NOT NULL,
        row_id uuid NOT NULL,
        PRIMARY KEY (project_id, row_id, method, path, status, consumer, day),
        CONSTRAINT consumer_calls_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id)
          ON DELETE CASCADE
      ) WITH (fillfactor = 70)`);
    await q.query(`
      INSERT INTO consumer_calls (project_id, environment_kind, method, path, status, consumer, day, calls, last_call, row_id)
      SELECT c.project_id, c.environment_kind, c.method, c.path, c.status, e.key, c.day, (e.value->>0)::bigint,
             to_timestamp((e.value->>1)::bigint / 1000.0), c.row_id
        FROM consumer_calls_per_key c CROSS JOIN LATERAL jsonb_each(c.consumers) e`);
    await q.query('DROP TABLE consumer_calls_per_key');
    await q.query('CREATE INDEX consumer_calls_day_idx ON consumer_calls (day)');
    await q.query(
      'CREATE INDEX consumer_calls_consumer_idx ON consumer_calls (project_id, environment_kind, consumer, day)',
    );
    await q.query(
      'CREATE INDEX consumer_calls_endpoint_idx ON consumer_calls (project_id, environment_kind, method, path, status)',
    );
  }
}
