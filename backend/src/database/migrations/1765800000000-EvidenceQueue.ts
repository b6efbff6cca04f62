import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Evidence without a hot row (issue 20): an evidence batch commits its observations and, in the
 * same transaction, one row here (the batch's distinct exchanges and runtime minutes, as JSON);
 * any replica folds a matrix row's queued batches into its evidence later, one fold per row at a
 * time (the row locked `FOR UPDATE SKIP LOCKED`), deleting what it folded in the same transaction.
 * The key starts with the project (a distributed PostgreSQL distributes by it).
 */
export class EvidenceQueue1765800000000 implements MigrationInterface {
  name = 'EvidenceQueue1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE evidence_queue (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        id bigint GENERATED ALWAYS AS IDENTITY,
        row_id uuid NOT NULL REFERENCES environment_rows(id) ON DELETE CASCADE,
        -- the batch's build and commit, which the row takes when folded (the latest batch's win)
        build text,
        commit text,
        last_seen timestamptz NOT NULL,
        -- the batch's distinct exchanges (evidence/evidence.repository.ts, EvidenceExchangeRow[])
        exchanges jsonb NOT NULL,
        -- the batch's runtime minutes (runtime/runtime.repository.ts, RuntimeMinute[])
        minutes jsonb NOT NULL,
        queued_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, id)
      )`);
    await q.query('CREATE INDEX evidence_queue_row_idx ON evidence_queue (row_id, id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE evidence_queue');
  }
}
