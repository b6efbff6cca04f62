import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consumers (issue 19): calls per endpoint (method, path), status, environment kind, consumer and
 * day, with the last call. `consumer` is a pseudonym the agent made (16 hex digits, never the value
 * it was made from), or `*` for every call counted by agents that identify consumers (what shares
 * are of), or `+` for calls of consumers past an agent's bound (counted, not named). Labels are a
 * team's names for pseudonyms ("mobile app 5.x").
 */
export class Consumers1765620000000 implements MigrationInterface {
  name = 'Consumers1765620000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE consumer_calls (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        environment_kind text NOT NULL CHECK (environment_kind IN ('ci', 'staging', 'production')),
        method text NOT NULL,
        path text NOT NULL,
        status integer NOT NULL,
        consumer text NOT NULL CHECK (consumer ~ '^([0-9a-f]{16}|[*+])$'),
        day date NOT NULL,
        calls bigint NOT NULL,
        last_call timestamptz NOT NULL,
        PRIMARY KEY (project_id, environment_kind, method, path, status, consumer, day)
      )`);
    // Retention deletes by day; the consumer list reads a project's rows by consumer.
    await q.query('CREATE INDEX consumer_calls_day_idx ON consumer_calls (day)');
    await q.query(
      'CREATE INDEX consumer_calls_consumer_idx ON consumer_calls (project_id, environment_kind, consumer, day)',
    );
    await q.query(`
      CREATE TABLE consumer_labels (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        consumer text NOT NULL CHECK (consumer ~ '^[0-9a-f]{16}$'),
        label text NOT NULL,
        updated_by text,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, consumer)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE consumer_labels');
    await q.query('DROP TABLE consumer_calls');
  }
}
