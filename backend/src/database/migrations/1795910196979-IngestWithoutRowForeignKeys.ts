import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Foreign keys off the ingest path (issue 20). A batch's statement inserted up to 40 rows into
 * `observations` and `capture_endpoints`, and every row ran its foreign keys' checks: a look-up of
 * its capture and of both its shapes (72,789 nested checks a saturated phase of the scale bench;
 * dropping them cut PostgreSQL's CPU by 15 %). What each one guaranteed now holds otherwise:
 *
 * - `observations` → `shapes` (request and response): a batch's observations name only
 *   fingerprints that are in the batch (inserted by the same statement) or already stored
 *   (`IngestService.ensureShapesKnown`), and shapes are never deleted, which the trigger
 *   `shapes_kept` makes PostgreSQL's rule rather than a habit of the code;
 * - `processed_batches` → `projects`: implied by its capture's key, which names the project; so
 *   is the project key of each table in IMPLIED_PROJECT_KEYS by its key to an environment row or
 *   endpoint of the project (deleted with it). Every batch and fold checked the project row
 *   (12,639 checks a saturated phase, each a lock on the one row every writer of a project takes);
 * - `observations`, `capture_endpoints`, `processed_batches` → `captures` (ON DELETE CASCADE): the
 *   batch statement (every writer of those rows goes through it) locks its capture `FOR KEY SHARE`
 *   once, as the checks did row by row, and writes nothing when it is gone; the cascade is the
 *   trigger `captures_rows_deleted`, run once per statement that deletes captures (retention, or
 *   a project's cascade), after the deleted captures' locks are taken, so it sees every batch that
 *   held one. Costs nothing when rows are written, which is where the checks cost.
 *
 * `down` adds the keys back (checking every row) and drops the triggers.
 */
/** Tables whose `<table>_project_id_fkey` another key of theirs implies (`(project_id, row_id)` or `(project_id, endpoint_id)`). */
const IMPLIED_PROJECT_KEYS = [
  'evidence_queue',
  'evidence_observations',
  'evidence_current',
  'consumer_calls',
  'drift_cells',
  'drift_origins',
] as const;

export class IngestWithoutRowForeignKeys1795910196979 implements MigrationInterface {
  name = 'IngestWithoutRowForeignKeys1795910196979';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE observations DROP CONSTRAINT observations_request_shape_fkey,
        DROP CONSTRAINT observations_response_shape_fkey, DROP CONSTRAINT observations_capture_fk`);
    await q.query('ALTER TABLE capture_endpoints DROP CONSTRAINT capture_endpoints_capture_fk');
    await q.query(
      'ALTER TABLE processed_batches DROP CONSTRAINT processed_batches_capture_fk, DROP CONSTRAINT processed_batches_project_id_fkey',
    );
    for (const table of IMPLIED_PROJECT_KEYS)
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_project_id_fkey`);
    await q.query(`
      CREATE FUNCTION shapes_kept() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'shapes are never deleted: observations name them without a foreign key';
      END $$`);
    await q.query(
      'CREATE TRIGGER shapes_kept BEFORE DELETE OR TRUNCATE ON shapes FOR EACH STATEMENT EXECUTE FUNCTION shapes_kept()',
    );
    // Each statement in the function reads a snapshot of its own (READ COMMITTED, the backend's
    // level): batches that committed while the delete waited for their locks are seen.
    await q.query(`
      CREATE FUNCTION captures_rows_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM observations o USING gone g
         WHERE o.project_id = g.project_id AND o.capture_id = g.id AND o.capture_created_at = g.created_at;
        DELETE FROM capture_endpoints ce USING gone g WHERE ce.project_id = g.project_id AND ce.capture_id = g.id;
        DELETE FROM processed_batches b USING gone g WHERE b.project_id = g.project_id AND b.capture_id = g.id;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER captures_rows_deleted AFTER DELETE ON captures REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION captures_rows_deleted()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER captures_rows_deleted ON captures');
    await q.query('DROP FUNCTION captures_rows_deleted()');
    await q.query('DROP TRIGGER shapes_kept ON shapes');
    await q.query('DROP FUNCTION shapes_kept()');
    for (const table of IMPLIED_PROJECT_KEYS)
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE`,
      );
    await q.query(`
      ALTER TABLE processed_batches
        ADD CONSTRAINT processed_batches_project_id_fkey FOREIGN KEY (project_id) REFERENCES projects (id) ON DELETE CASCADE,
        ADD CONSTRAINT processed_batches_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE capture_endpoints
        ADD CONSTRAINT capture_endpoints_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE observations
        ADD CONSTRAINT observations_request_shape_fkey FOREIGN KEY (request_shape) REFERENCES shapes (fingerprint),
        ADD CONSTRAINT observations_response_shape_fkey FOREIGN KEY (response_shape) REFERENCES shapes (fingerprint),
        ADD CONSTRAINT observations_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE`);
  }
}
