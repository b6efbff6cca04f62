import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A proposal's steps and planned endpoints keyed by project (issue 20, "Past one PostgreSQL"):
 * proposals get a unique (id, project_id) beside their primary key; steps and planned endpoints
 * get their proposal's project and reference it (and a step its capture) project with project, so
 * a distributed PostgreSQL (Citus, by `project_id`) could keep them on the node of their project.
 * Keys and once-only constraints end with the project, so reads by proposal or by id use the same
 * index prefix as before. A step's capture still becomes NULL when the capture goes, its project never.
 */
export class ProposalRowsByProject1765960000000 implements MigrationInterface {
  name = 'ProposalRowsByProject1765960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE proposals ADD CONSTRAINT proposals_id_project_unique UNIQUE (id, project_id)');
    for (const table of ['proposal_steps', 'proposal_endpoints']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN project_id uuid`);
      await q.query(`UPDATE ${table} t SET project_id = p.project_id FROM proposals p WHERE p.id = t.proposal_id`);
      await q.query(`
        ALTER TABLE ${table}
          ALTER COLUMN project_id SET NOT NULL,
          DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (id, project_id),
          DROP CONSTRAINT ${table}_proposal_id_fkey,
          ADD CONSTRAINT ${table}_proposal_fk FOREIGN KEY (project_id, proposal_id) REFERENCES proposals (project_id, id) ON DELETE CASCADE`);
    }
    await q.query(`
      ALTER TABLE proposal_steps
        DROP CONSTRAINT proposal_steps_once, ADD CONSTRAINT proposal_steps_once UNIQUE (proposal_id, step, project_id),
        DROP CONSTRAINT proposal_steps_capture_id_fkey,
        ADD CONSTRAINT proposal_steps_capture_fk FOREIGN KEY (project_id, capture_id)
          REFERENCES captures (project_id, id) ON DELETE SET NULL (capture_id)`);
    await q.query(`
      ALTER TABLE proposal_endpoints
        DROP CONSTRAINT proposal_endpoints_once, ADD CONSTRAINT proposal_endpoints_once UNIQUE (proposal_id, method, path, project_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE proposal_endpoints
        DROP CONSTRAINT proposal_endpoints_once, ADD CONSTRAINT proposal_endpoints_once UNIQUE (proposal_id, method, path)`);
    await q.query(`
      ALTER TABLE proposal_steps
        DROP CONSTRAINT proposal_steps_capture_fk,
        ADD CONSTRAINT proposal_steps_capture_id_fkey FOREIGN KEY (capture_id) REFERENCES captures (id) ON DELETE SET NULL,
        DROP CONSTRAINT proposal_steps_once, ADD CONSTRAINT proposal_steps_once UNIQUE (proposal_id, step)`);
    for (const table of ['proposal_endpoints', 'proposal_steps']) {
      await q.query(`
        ALTER TABLE ${table}
          DROP CONSTRAINT ${table}_proposal_fk,
          ADD CONSTRAINT ${table}_proposal_id_fkey FOREIGN KEY (proposal_id) REFERENCES proposals (id) ON DELETE CASCADE,
          DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (id),
          DROP COLUMN project_id`);
    }
    await q.query('ALTER TABLE proposals DROP CONSTRAINT proposals_id_project_unique');
  }
}
