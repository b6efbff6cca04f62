import type { MigrationInterface, QueryRunner } from 'typeorm';

const OBSERVATION_COLUMNS = `row_id, method, path, status,
  (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
  (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' '))`;

/**
 * Evidence keyed by project (issue 20, "Past one PostgreSQL"), first step: environment rows and
 * endpoints get a unique key with their project, which the tables of evidence that hang on them
 * reference project with project: the queue, the observed exchanges, where drift began and the
 * drifting cells. A distributed PostgreSQL (Citus, by `project_id`) could then keep them on the
 * node of their project. Keys keep their old columns first (reads go by row and endpoint) and end
 * with the project. Environment rows and endpoints keep their own primary key on the id while
 * other tables still reference it alone.
 */
export class EvidenceRowsByProject1765940000000 implements MigrationInterface {
  name = 'EvidenceRowsByProject1765940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE environment_rows ADD CONSTRAINT environment_rows_id_project_unique UNIQUE (id, project_id)',
    );
    await q.query('ALTER TABLE endpoints ADD CONSTRAINT endpoints_id_project_unique UNIQUE (id, project_id)');
    await q.query(`
      ALTER TABLE evidence_queue
        DROP CONSTRAINT evidence_queue_row_id_fkey,
        ADD CONSTRAINT evidence_queue_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE`);
    await q.query('DROP INDEX evidence_observations_key');
    await q.query(
      `CREATE UNIQUE INDEX evidence_observations_key ON evidence_observations (${OBSERVATION_COLUMNS}, project_id)`,
    );
    await q.query(`
      ALTER TABLE evidence_observations
        DROP CONSTRAINT evidence_observations_row_id_fkey,
        ADD CONSTRAINT evidence_observations_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE drift_origins
        DROP CONSTRAINT drift_origins_pkey, ADD PRIMARY KEY (endpoint_id, signature, kind, project_id),
        DROP CONSTRAINT drift_origins_endpoint_id_fkey,
        ADD CONSTRAINT drift_origins_endpoint_fk FOREIGN KEY (project_id, endpoint_id) REFERENCES endpoints (project_id, id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE drift_cells
        DROP CONSTRAINT drift_cells_pkey, ADD PRIMARY KEY (row_id, endpoint_id, project_id),
        DROP CONSTRAINT drift_cells_row_id_fkey,
        ADD CONSTRAINT drift_cells_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE,
        DROP CONSTRAINT drift_cells_endpoint_id_fkey,
        ADD CONSTRAINT drift_cells_endpoint_fk FOREIGN KEY (project_id, endpoint_id) REFERENCES endpoints (project_id, id) ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE drift_cells
        DROP CONSTRAINT drift_cells_endpoint_fk,
        ADD CONSTRAINT drift_cells_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints (id) ON DELETE CASCADE,
        DROP CONSTRAINT drift_cells_row_fk,
        ADD CONSTRAINT drift_cells_row_id_fkey FOREIGN KEY (row_id) REFERENCES environment_rows (id) ON DELETE CASCADE,
        DROP CONSTRAINT drift_cells_pkey, ADD PRIMARY KEY (row_id, endpoint_id)`);
    await q.query(`
      ALTER TABLE drift_origins
        DROP CONSTRAINT drift_origins_endpoint_fk,
        ADD CONSTRAINT drift_origins_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints (id) ON DELETE CASCADE,
        DROP CONSTRAINT drift_origins_pkey, ADD PRIMARY KEY (endpoint_id, signature, kind)`);
    await q.query(`
      ALTER TABLE evidence_observations
        DROP CONSTRAINT evidence_observations_row_fk,
        ADD CONSTRAINT evidence_observations_row_id_fkey FOREIGN KEY (row_id) REFERENCES environment_rows (id) ON DELETE CASCADE`);
    await q.query('DROP INDEX evidence_observations_key');
    await q.query(`CREATE UNIQUE INDEX evidence_observations_key ON evidence_observations (${OBSERVATION_COLUMNS})`);
    await q.query(`
      ALTER TABLE evidence_queue
        DROP CONSTRAINT evidence_queue_row_fk,
        ADD CONSTRAINT evidence_queue_row_id_fkey FOREIGN KEY (row_id) REFERENCES environment_rows (id) ON DELETE CASCADE`);
    await q.query('ALTER TABLE endpoints DROP CONSTRAINT endpoints_id_project_unique');
    await q.query('ALTER TABLE environment_rows DROP CONSTRAINT environment_rows_id_project_unique');
  }
}
