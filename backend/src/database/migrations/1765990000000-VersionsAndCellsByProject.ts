import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Versions and matrix cells keyed by project (issue 20, "Past one PostgreSQL"): endpoint versions
 * get their endpoint's project and matrix cells their row's; versions are keyed (id, project_id),
 * and every foreign key among endpoints, versions, proposals, environment rows, cells and "what
 * runs there now" pairs project with project, so a distributed PostgreSQL (Citus, by `project_id`)
 * could keep them on the node of their project. Keys keep their old columns first (versions are
 * read by id and by endpoint, cells by row), and end with the project. A SET NULL on delete names
 * the id it clears, never the project.
 */
export class VersionsAndCellsByProject1765990000000 implements MigrationInterface {
  name = 'VersionsAndCellsByProject1765990000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE endpoint_versions ADD COLUMN project_id uuid');
    await q.query(
      'UPDATE endpoint_versions v SET project_id = e.project_id FROM endpoints e WHERE e.id = v.endpoint_id',
    );
    await q.query('ALTER TABLE evidence_cells ADD COLUMN project_id uuid');
    await q.query(
      'UPDATE evidence_cells c SET project_id = r.project_id FROM environment_rows r WHERE r.id = c.row_id',
    );
    await q.query('ALTER TABLE endpoints DROP CONSTRAINT endpoints_current_version_fk');
    await q.query('ALTER TABLE evidence_cells DROP CONSTRAINT evidence_cells_version_id_fkey');
    await q.query('ALTER TABLE evidence_current DROP CONSTRAINT evidence_current_version_id_fkey');
    await q.query(`
      ALTER TABLE endpoint_versions
        ALTER COLUMN project_id SET NOT NULL,
        DROP CONSTRAINT endpoint_versions_pkey, ADD PRIMARY KEY (id, project_id),
        DROP CONSTRAINT endpoint_versions_number_unique, ADD CONSTRAINT endpoint_versions_number_unique UNIQUE (endpoint_id, major, minor, project_id),
        DROP CONSTRAINT endpoint_versions_endpoint_id_fkey,
        ADD CONSTRAINT endpoint_versions_endpoint_fk FOREIGN KEY (project_id, endpoint_id) REFERENCES endpoints (project_id, id) ON DELETE CASCADE,
        DROP CONSTRAINT endpoint_versions_proposal_id_fkey,
        ADD CONSTRAINT endpoint_versions_proposal_fk FOREIGN KEY (project_id, proposal_id)
          REFERENCES proposals (project_id, id) ON DELETE SET NULL (proposal_id)`);
    await q.query(`
      ALTER TABLE endpoints ADD CONSTRAINT endpoints_current_version_fk FOREIGN KEY (project_id, current_version_id)
        REFERENCES endpoint_versions (project_id, id) ON DELETE SET NULL (current_version_id) DEFERRABLE INITIALLY DEFERRED`);
    await q.query(`
      ALTER TABLE evidence_cells
        ALTER COLUMN project_id SET NOT NULL,
        DROP CONSTRAINT evidence_cells_pkey, ADD PRIMARY KEY (row_id, endpoint_id, project_id),
        DROP CONSTRAINT evidence_cells_row_id_fkey,
        ADD CONSTRAINT evidence_cells_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE,
        DROP CONSTRAINT evidence_cells_endpoint_id_fkey,
        ADD CONSTRAINT evidence_cells_endpoint_fk FOREIGN KEY (project_id, endpoint_id) REFERENCES endpoints (project_id, id) ON DELETE CASCADE,
        ADD CONSTRAINT evidence_cells_version_fk FOREIGN KEY (project_id, version_id)
          REFERENCES endpoint_versions (project_id, id) ON DELETE SET NULL (version_id)`);
    await q.query(`
      ALTER TABLE evidence_current
        DROP CONSTRAINT evidence_current_row_id_fkey,
        ADD CONSTRAINT evidence_current_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE,
        DROP CONSTRAINT evidence_current_endpoint_id_fkey,
        ADD CONSTRAINT evidence_current_endpoint_fk FOREIGN KEY (project_id, endpoint_id) REFERENCES endpoints (project_id, id) ON DELETE CASCADE,
        ADD CONSTRAINT evidence_current_version_fk FOREIGN KEY (project_id, version_id)
          REFERENCES endpoint_versions (project_id, id) ON DELETE SET NULL (version_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE evidence_current
        DROP CONSTRAINT evidence_current_version_fk,
        DROP CONSTRAINT evidence_current_endpoint_fk,
        ADD CONSTRAINT evidence_current_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints (id) ON DELETE CASCADE,
        DROP CONSTRAINT evidence_current_row_fk,
        ADD CONSTRAINT evidence_current_row_id_fkey FOREIGN KEY (row_id) REFERENCES environment_rows (id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE evidence_cells
        DROP CONSTRAINT evidence_cells_version_fk,
        DROP CONSTRAINT evidence_cells_endpoint_fk,
        ADD CONSTRAINT evidence_cells_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints (id) ON DELETE CASCADE,
        DROP CONSTRAINT evidence_cells_row_fk,
        ADD CONSTRAINT evidence_cells_row_id_fkey FOREIGN KEY (row_id) REFERENCES environment_rows (id) ON DELETE CASCADE,
        DROP CONSTRAINT evidence_cells_pkey, ADD PRIMARY KEY (row_id, endpoint_id),
        DROP COLUMN project_id`);
    await q.query('ALTER TABLE endpoints DROP CONSTRAINT endpoints_current_version_fk');
    await q.query(`
      ALTER TABLE endpoint_versions
        DROP CONSTRAINT endpoint_versions_proposal_fk,
        ADD CONSTRAINT endpoint_versions_proposal_id_fkey FOREIGN KEY (proposal_id) REFERENCES proposals (id) ON DELETE SET NULL,
        DROP CONSTRAINT endpoint_versions_endpoint_fk,
        ADD CONSTRAINT endpoint_versions_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES endpoints (id) ON DELETE CASCADE,
        DROP CONSTRAINT endpoint_versions_number_unique, ADD CONSTRAINT endpoint_versions_number_unique UNIQUE (endpoint_id, major, minor),
        DROP CONSTRAINT endpoint_versions_pkey, ADD PRIMARY KEY (id),
        DROP COLUMN project_id`);
    await q.query(`
      ALTER TABLE endpoints ADD CONSTRAINT endpoints_current_version_fk FOREIGN KEY (current_version_id)
        REFERENCES endpoint_versions (id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED`);
    await q.query(
      'ALTER TABLE evidence_current ADD CONSTRAINT evidence_current_version_id_fkey FOREIGN KEY (version_id) REFERENCES endpoint_versions (id) ON DELETE SET NULL',
    );
    await q.query(
      'ALTER TABLE evidence_cells ADD CONSTRAINT evidence_cells_version_id_fkey FOREIGN KEY (version_id) REFERENCES endpoint_versions (id) ON DELETE SET NULL',
    );
  }
}
