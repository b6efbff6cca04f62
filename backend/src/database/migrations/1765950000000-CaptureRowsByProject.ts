import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Gives `table` its capture's project and makes its key end with it, referencing the capture with its project. */
async function keyByCaptureProject(q: QueryRunner, table: string, key: string): Promise<void> {
  await q.query(`ALTER TABLE ${table} ADD COLUMN project_id uuid`);
  await q.query(`UPDATE ${table} t SET project_id = c.project_id FROM captures c WHERE c.id = t.capture_id`);
  await q.query(`
    ALTER TABLE ${table}
      ALTER COLUMN project_id SET NOT NULL,
      DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (${key}, project_id),
      DROP CONSTRAINT ${table}_capture_id_fkey,
      ADD CONSTRAINT ${table}_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE`);
}

/** Undoes `keyByCaptureProject`. */
async function unkey(q: QueryRunner, table: string, key: string): Promise<void> {
  await q.query(`
    ALTER TABLE ${table}
      DROP CONSTRAINT ${table}_capture_fk,
      ADD CONSTRAINT ${table}_capture_id_fkey FOREIGN KEY (capture_id) REFERENCES captures (id) ON DELETE CASCADE,
      DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (${key}),
      DROP COLUMN project_id`);
}

/**
 * What hangs on a capture keyed by project (issue 20, "Past one PostgreSQL"): captures get a
 * unique (id, project_id) beside their primary key, which committed batch ids, capture endpoint
 * summaries, learned templates and a proposal's source capture reference project with project, so
 * a distributed PostgreSQL (Citus, by `project_id`) could keep them on the node of their project.
 * Summaries and learned templates get their capture's project; keys end with it, so reads by
 * capture (or batch id) use the same index prefix as before. A batch id is now unique within its
 * project (an agent only ever sends batches of its own project). A proposal's source capture still
 * becomes NULL when the capture goes, its project never.
 */
export class CaptureRowsByProject1765950000000 implements MigrationInterface {
  name = 'CaptureRowsByProject1765950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE captures ADD CONSTRAINT captures_id_project_unique UNIQUE (id, project_id)');
    await q.query(`
      ALTER TABLE processed_batches
        DROP CONSTRAINT processed_batches_pkey, ADD PRIMARY KEY (batch_id, project_id),
        DROP CONSTRAINT processed_batches_capture_id_fkey,
        ADD CONSTRAINT processed_batches_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE`);
    await keyByCaptureProject(q, 'capture_endpoints', 'capture_id, method, path');
    await keyByCaptureProject(q, 'capture_learned_templates', 'capture_id, template');
    await q.query(`
      ALTER TABLE proposals
        DROP CONSTRAINT proposals_source_capture_id_fkey,
        ADD CONSTRAINT proposals_source_capture_fk FOREIGN KEY (project_id, source_capture_id)
          REFERENCES captures (project_id, id) ON DELETE SET NULL (source_capture_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE proposals
        DROP CONSTRAINT proposals_source_capture_fk,
        ADD CONSTRAINT proposals_source_capture_id_fkey FOREIGN KEY (source_capture_id) REFERENCES captures (id) ON DELETE SET NULL`);
    await unkey(q, 'capture_learned_templates', 'capture_id, template');
    await unkey(q, 'capture_endpoints', 'capture_id, method, path');
    await q.query(`
      ALTER TABLE processed_batches
        DROP CONSTRAINT processed_batches_capture_fk,
        ADD CONSTRAINT processed_batches_capture_id_fkey FOREIGN KEY (capture_id) REFERENCES captures (id) ON DELETE CASCADE,
        DROP CONSTRAINT processed_batches_pkey, ADD PRIMARY KEY (batch_id)`);
    await q.query('ALTER TABLE captures DROP CONSTRAINT captures_id_project_unique');
  }
}
