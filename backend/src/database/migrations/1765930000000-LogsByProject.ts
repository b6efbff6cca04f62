import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two append-only logs keyed by project too (issue 20, "Past one PostgreSQL"): dashboard
 * events and audit events, so a distributed PostgreSQL (Citus, by `project_id`) could keep them
 * beside the rest of their project. The keys start with the id: listeners read dashboard events
 * back by id alone. Every audit event has had a project since the log began (the column allowed
 * NULL, no writer used it).
 */
export class LogsByProject1765930000000 implements MigrationInterface {
  name = 'LogsByProject1765930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE dashboard_events DROP CONSTRAINT dashboard_events_pkey, ADD PRIMARY KEY (id, project_id)',
    );
    await q.query(`
      ALTER TABLE audit_events
        ALTER COLUMN project_id SET NOT NULL,
        DROP CONSTRAINT audit_events_pkey, ADD PRIMARY KEY (id, project_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE audit_events
        DROP CONSTRAINT audit_events_pkey, ADD PRIMARY KEY (id),
        ALTER COLUMN project_id DROP NOT NULL`);
    await q.query('ALTER TABLE dashboard_events DROP CONSTRAINT dashboard_events_pkey, ADD PRIMARY KEY (id)');
  }
}
