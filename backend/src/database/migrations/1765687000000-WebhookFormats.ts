import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chat formats of webhooks (docs/webhooks.md): each webhook's deliveries are written as
 * Spectator's JSON event, a Slack message or a Teams message. And the endpoints each project's
 * production traffic reached, each once, so an undocumented one is announced the first time only
 * (`endpoints.undocumented`); filled from the production evidence already kept.
 */
export class WebhookFormats1765687000000 implements MigrationInterface {
  name = 'WebhookFormats1765687000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks ADD COLUMN format text NOT NULL DEFAULT 'json'
         CONSTRAINT webhooks_format_known CHECK (format IN ('json', 'slack', 'teams'))`,
    );
    await q.query(`
      CREATE TABLE endpoint_sightings (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        kind text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        first_seen timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, kind, method, path)
      )`);
    await q.query(`
      INSERT INTO endpoint_sightings (project_id, kind, method, path, first_seen)
      SELECT o.project_id, r.kind, o.method, o.path, min(r.first_seen)
        FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id
       WHERE r.kind = 'production'
       GROUP BY o.project_id, r.kind, o.method, o.path`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE endpoint_sightings');
    await q.query('ALTER TABLE webhooks DROP COLUMN format');
  }
}
