import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks and their deliveries keyed by project (issue 20, "Past one PostgreSQL"): a delivery
 * carries its webhook's project and its foreign key pairs project with project, so a distributed
 * PostgreSQL (Citus, by `project_id`) could keep a project's webhooks and deliveries on one node.
 * A webhook's key starts with the project (every read names it); a delivery's with its id, since
 * deliveries are claimed across projects and updated by id alone.
 */
export class WebhooksByProject1765910000000 implements MigrationInterface {
  name = 'WebhooksByProject1765910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE webhook_deliveries ADD COLUMN project_id uuid');
    await q.query(
      'UPDATE webhook_deliveries d SET project_id = w.project_id FROM webhooks w WHERE w.id = d.webhook_id',
    );
    await q.query(`
      ALTER TABLE webhook_deliveries
        ALTER COLUMN project_id SET NOT NULL,
        DROP CONSTRAINT webhook_deliveries_webhook_id_fkey`);
    await q.query('ALTER TABLE webhooks DROP CONSTRAINT webhooks_pkey, ADD PRIMARY KEY (project_id, id)');
    // the key starts with the project now
    await q.query('DROP INDEX webhooks_project_idx');
    await q.query(`
      ALTER TABLE webhook_deliveries
        DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (id, project_id),
        DROP CONSTRAINT webhook_deliveries_once, ADD CONSTRAINT webhook_deliveries_once UNIQUE (project_id, webhook_id, event_id),
        ADD CONSTRAINT webhook_deliveries_webhook_fk FOREIGN KEY (project_id, webhook_id)
          REFERENCES webhooks (project_id, id) ON DELETE CASCADE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_deliveries
        DROP CONSTRAINT webhook_deliveries_webhook_fk,
        DROP CONSTRAINT webhook_deliveries_once, ADD CONSTRAINT webhook_deliveries_once UNIQUE (webhook_id, event_id),
        DROP CONSTRAINT webhook_deliveries_pkey, ADD PRIMARY KEY (id)`);
    await q.query('ALTER TABLE webhooks DROP CONSTRAINT webhooks_pkey, ADD PRIMARY KEY (id)');
    await q.query('CREATE INDEX webhooks_project_idx ON webhooks (project_id)');
    await q.query(`
      ALTER TABLE webhook_deliveries
        ADD CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE,
        DROP COLUMN project_id`);
  }
}
