import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two writes of every batch that bought nothing (issue 20, counted with batch-cpu.bench's
 * BATCH_CPU_COUNT and pg_walinspect):
 *
 * - `evidence_queue` → `environment_rows`: each batch that queued evidence checked its row's key,
 *   a `FOR KEY SHARE` lock on the one environment row every pod of the build shares (a WAL record
 *   on that row's page per batch, 3 buffers, and a new multixact whenever two batches, or a batch
 *   and the row's fold, hold it at once). The row id is the one the ingest made or found for the
 *   batch's environment (`EvidenceService.queuedEvidence`) just before, and environment rows are
 *   deleted only with their project. What the key's cascade did, two statement triggers do: deleting environment rows
 *   deletes their queued batches, and deleting projects deletes every batch still queued for
 *   them, after the projects' cascades ran (the cascade to captures waits for every batch holding
 *   its capture `FOR KEY SHARE`, so a batch that committed meanwhile is seen; a later one finds no
 *   capture and queues nothing). Costs nothing when batches are written.
 * - `processed_batches_committed_idx`, a btree on `committed_at` beside the BRIN index that
 *   BatchKeysForgotten added for the same ranges: pruning and forgetting read through the BRIN
 *   index (ids are appended in commit order), and each batch wrote an entry to both.
 *
 * `down` puts both back (queued batches of rows already gone are deleted first).
 */
export class BatchWithoutSharedRowLock1795950000000 implements MigrationInterface {
  name = 'BatchWithoutSharedRowLock1795950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE evidence_queue DROP CONSTRAINT evidence_queue_row_fk');
    await q.query(`
      CREATE FUNCTION environment_rows_queue_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM evidence_queue q USING gone g WHERE q.project_id = g.project_id AND q.row_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER environment_rows_queue_deleted AFTER DELETE ON environment_rows REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION environment_rows_queue_deleted()`);
    // A statement trigger on projects fires after the row-level cascades of the same delete.
    await q.query(`
      CREATE FUNCTION projects_queue_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM evidence_queue q USING gone g WHERE q.project_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER projects_queue_deleted AFTER DELETE ON projects REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION projects_queue_deleted()`);
    await q.query('DROP INDEX processed_batches_committed_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX processed_batches_committed_idx ON processed_batches (committed_at)');
    await q.query('DROP TRIGGER projects_queue_deleted ON projects');
    await q.query('DROP FUNCTION projects_queue_deleted()');
    await q.query('DROP TRIGGER environment_rows_queue_deleted ON environment_rows');
    await q.query('DROP FUNCTION environment_rows_queue_deleted()');
    await q.query(`
      DELETE FROM evidence_queue q
       WHERE NOT EXISTS (SELECT FROM environment_rows r WHERE r.project_id = q.project_id AND r.id = q.row_id)`);
    await q.query(`
      ALTER TABLE evidence_queue ADD CONSTRAINT evidence_queue_row_fk
        FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE`);
  }
}
