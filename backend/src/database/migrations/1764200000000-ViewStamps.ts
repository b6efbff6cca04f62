import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the capture views' cache checks on every request, so that a cached view is served only
 * while nothing it depends on has changed, on any replica:
 *  - `projects.documentation_revision` grows with every endpoint version written: a trigger, so
 *    every writer of versions bumps it, whichever code path or replica it runs on. It is deferred
 *    to commit time, when the writer already holds its endpoint rows: taking the project row in
 *    the middle of a commit could deadlock two commits that write overlapping endpoints;
 *  - an index to count a capture's batches committed since a time (each batch that changes a
 *    capture's summaries or observations inserts its `processed_batches` row in the same
 *    transaction; old rows are pruned, so the views count from a recent start, see CapturesService).
 */
export class ViewStamps1764200000000 implements MigrationInterface {
  name = 'ViewStamps1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE projects ADD COLUMN documentation_revision bigint NOT NULL DEFAULT 0');
    await q.query(`
      CREATE FUNCTION bump_documentation_revision() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE projects SET documentation_revision = documentation_revision + 1
         WHERE id = (SELECT project_id FROM endpoints WHERE id = NEW.endpoint_id);
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE CONSTRAINT TRIGGER endpoint_versions_bump_documentation_revision AFTER INSERT ON endpoint_versions
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_documentation_revision()`);
    await q.query('CREATE INDEX processed_batches_capture_idx ON processed_batches (capture_id, committed_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX processed_batches_capture_idx');
    await q.query('DROP TRIGGER endpoint_versions_bump_documentation_revision ON endpoint_versions');
    await q.query('DROP FUNCTION bump_documentation_revision()');
    await q.query('ALTER TABLE projects DROP COLUMN documentation_revision');
  }
}
