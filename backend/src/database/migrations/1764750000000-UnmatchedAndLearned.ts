import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Noise counted apart (docs/paths.md, Noise): `captures.unmatched_requests` adds up the requests
 * that only got 404/405 on paths matching no template, `captures.unmatched_paths` keeps the largest
 * running total of distinct such paths the agent reported. Counts only: the agent never sends the
 * paths. `capture_learned_templates` keeps the templates an agent learned for a capture (a
 * `learned` message), so rows of its batches that arrive later under a literal path they cover
 * are stored under the template. Both columns have constant defaults: no table rewrite.
 */
export class UnmatchedAndLearned1764750000000 implements MigrationInterface {
  name = 'UnmatchedAndLearned1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE captures ADD COLUMN unmatched_requests bigint NOT NULL DEFAULT 0, ADD COLUMN unmatched_paths integer NOT NULL DEFAULT 0',
    );
    await q.query(`
      CREATE TABLE capture_learned_templates (
        capture_id uuid NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
        template text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (capture_id, template)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE capture_learned_templates');
    await q.query('ALTER TABLE captures DROP COLUMN unmatched_requests, DROP COLUMN unmatched_paths');
  }
}
