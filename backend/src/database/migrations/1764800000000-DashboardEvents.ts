import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dashboard events travel between replicas as ids: PostgreSQL refuses a NOTIFY payload of 8,000
 * bytes or more, which a documentation commit of a few hundred endpoints exceeded. Each event is
 * stored here (the exact JSON text sent to dashboards) and its id is notified; listeners read it
 * back. Rows are only needed until every replica has read them: they are pruned after minutes.
 */
export class DashboardEvents1764800000000 implements MigrationInterface {
  name = 'DashboardEvents1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard_events (
        id bigserial PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        event text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX dashboard_events_created_idx ON dashboard_events (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE dashboard_events');
  }
}
