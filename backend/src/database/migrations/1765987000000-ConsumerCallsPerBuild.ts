import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Consumer calls per build (issues 19 and 20): `consumer_calls` is keyed by the environment row
 * (one per staging or production build, one per pull request's CI run) instead of the environment
 * kind, and written by the fold of the row's queued evidence (the batch queues its consumer days in
 * `evidence_queue.consumers`) instead of in each batch's transaction: only the row's fold writes
 * the row's counts, so agents of one build no longer wait on rows they all share.
 *
 * Calls kept before this migration were counted per kind only: they go to the newest row of their
 * kind (by last evidence), so each kind's totals stay exact; calls of a kind with no row left are
 * dropped (there is no build to show them under).
 */
export class ConsumerCallsPerBuild1765987000000 implements MigrationInterface {
  name = 'ConsumerCallsPerBuild1765987000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE evidence_queue ADD COLUMN consumers jsonb NOT NULL DEFAULT '[]'::jsonb`);
    // Paired with the project, as the evidence's references to rows (distributable by project).
    await q.query(`
      ALTER TABLE consumer_calls ADD COLUMN row_id uuid,
        ADD CONSTRAINT consumer_calls_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id)
          ON DELETE CASCADE`);
    await q.query(`
      UPDATE consumer_calls c SET row_id = (
        SELECT r.id FROM environment_rows r
         WHERE r.project_id = c.project_id AND r.kind = c.environment_kind
         ORDER BY r.last_seen DESC, r.id LIMIT 1)`);
    await q.query('DELETE FROM consumer_calls WHERE row_id IS NULL');
    await q.query('ALTER TABLE consumer_calls ALTER COLUMN row_id SET NOT NULL');
    await q.query('ALTER TABLE consumer_calls DROP CONSTRAINT consumer_calls_pkey');
    await q.query(
      'ALTER TABLE consumer_calls ADD PRIMARY KEY (project_id, row_id, method, path, status, consumer, day)',
    );
    // One endpoint's calls in an environment (the endpoint's consumers, blast radius), across its rows.
    await q.query(
      'CREATE INDEX consumer_calls_endpoint_idx ON consumer_calls (project_id, environment_kind, method, path, status)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX consumer_calls_endpoint_idx');
    await q.query('ALTER TABLE consumer_calls DROP CONSTRAINT consumer_calls_pkey');
    // Each kind's calls added up again, under no row; then the rows per build go.
    await q.query('ALTER TABLE consumer_calls ALTER COLUMN row_id DROP NOT NULL');
    await q.query(`
      INSERT INTO consumer_calls (project_id, environment_kind, row_id, method, path, status, consumer, day, calls, last_call)
      SELECT project_id, environment_kind, NULL, method, path, status, consumer, day, sum(calls), max(last_call)
        FROM consumer_calls WHERE row_id IS NOT NULL
       GROUP BY project_id, environment_kind, method, path, status, consumer, day`);
    await q.query('DELETE FROM consumer_calls WHERE row_id IS NOT NULL');
    await q.query('ALTER TABLE consumer_calls DROP CONSTRAINT consumer_calls_row_fk, DROP COLUMN row_id');
    await q.query(
      'ALTER TABLE consumer_calls ADD PRIMARY KEY (project_id, environment_kind, method, path, status, consumer, day)',
    );
    await q.query('ALTER TABLE evidence_queue DROP COLUMN consumers');
  }
}
