import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A queued batch's evidence is written once (in the batch's transaction, before its ack) and read
 * once (by the fold that deletes it), whole: as `json` PostgreSQL only checks the text and keeps
 * it, where `jsonb` built its binary form on the way in and printed it back to text for the fold.
 * Regrouping, the one statement that looks inside, casts to `jsonb` for its rewrite.
 */
const COLUMNS = ['exchanges', 'minutes', 'consumers'];

export class QueuedEvidenceAsJson1795892823338 implements MigrationInterface {
  name = 'QueuedEvidenceAsJson1795892823338';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE evidence_queue ALTER COLUMN consumers DROP DEFAULT`);
    await q.query(
      `ALTER TABLE evidence_queue ${COLUMNS.map((column) => `ALTER COLUMN ${column} TYPE json USING ${column}::json`).join(', ')}`,
    );
    await q.query(`ALTER TABLE evidence_queue ALTER COLUMN consumers SET DEFAULT '[]'::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE evidence_queue ALTER COLUMN consumers DROP DEFAULT`);
    await q.query(
      `ALTER TABLE evidence_queue ${COLUMNS.map((column) => `ALTER COLUMN ${column} TYPE jsonb USING ${column}::jsonb`).join(', ')}`,
    );
    await q.query(`ALTER TABLE evidence_queue ALTER COLUMN consumers SET DEFAULT '[]'::jsonb`);
  }
}
