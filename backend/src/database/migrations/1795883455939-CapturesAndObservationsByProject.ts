import type { MigrationInterface, QueryRunner } from 'typeorm';
import { rekey } from './1766000000000-ParentsKeyedByProject';

/** The aggregate key of an observation row: NULL (no body, no shape) folded to ' ' as before. */
const AGGREGATE_KEY = `capture_id, method, path, status,
  (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
  (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' '))`;

/**
 * The last two tables keyed by project (issue 20, "Past one PostgreSQL"): observations get their
 * capture's project, their key and aggregate key end with it, and they reference the capture with
 * it; then nothing references a capture by its id alone, so the capture's key becomes (id,
 * project_id). A capture id is chosen by its agent: it stays unique over all projects because
 * `CapturesRepository.open` refuses an id another project has (under an advisory lock), which a
 * distributed PostgreSQL could not check with a key.
 */
export class CapturesAndObservationsByProject1795883455939 implements MigrationInterface {
  name = 'CapturesAndObservationsByProject1795883455939';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE observations ADD COLUMN project_id uuid');
    await q.query('UPDATE observations o SET project_id = c.project_id FROM captures c WHERE c.id = o.capture_id');
    await q.query(`
      ALTER TABLE observations
        ALTER COLUMN project_id SET NOT NULL,
        DROP CONSTRAINT observations_pkey, ADD PRIMARY KEY (id, project_id),
        DROP CONSTRAINT observations_capture_id_fkey,
        ADD CONSTRAINT observations_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE`);
    await q.query('DROP INDEX observations_aggregate_key');
    await q.query(`CREATE UNIQUE INDEX observations_aggregate_key ON observations (${AGGREGATE_KEY}, project_id)`);
    await rekey(
      q,
      'captures',
      'DROP CONSTRAINT captures_id_project_unique, DROP CONSTRAINT captures_pkey, ADD PRIMARY KEY (id, project_id)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await rekey(
      q,
      'captures',
      'DROP CONSTRAINT captures_pkey, ADD PRIMARY KEY (id), ADD CONSTRAINT captures_id_project_unique UNIQUE (id, project_id)',
    );
    await q.query('DROP INDEX observations_aggregate_key');
    await q.query(`CREATE UNIQUE INDEX observations_aggregate_key ON observations (${AGGREGATE_KEY})`);
    await q.query(`
      ALTER TABLE observations
        DROP CONSTRAINT observations_capture_fk,
        ADD CONSTRAINT observations_capture_id_fkey FOREIGN KEY (capture_id) REFERENCES captures (id) ON DELETE CASCADE,
        DROP CONSTRAINT observations_pkey, ADD PRIMARY KEY (id),
        DROP COLUMN project_id`);
  }
}
