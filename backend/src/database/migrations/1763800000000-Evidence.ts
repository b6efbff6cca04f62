import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Evidence and reactions to it: environment rows (a pull request's CI run, a staging build, a
 * production build), the distinct shapes each row observed per method + path, the precomputed
 * matrix cells and "what runs there now", the endpoints of proposals not yet approved, webhooks
 * and their durable delivery log.
 */
export class Evidence1763800000000 implements MigrationInterface {
  name = 'Evidence1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE environment_rows (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        kind text NOT NULL CONSTRAINT environment_rows_kind_known CHECK (kind IN ('ci', 'staging', 'production')),
        name text NOT NULL,
        -- what "runs there now" is tracked per: the pull request for ci, '' (the whole environment) otherwise
        scope text NOT NULL,
        pull_request text,
        build text,
        commit text,
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL,
        CONSTRAINT environment_rows_name_unique UNIQUE (project_id, kind, name)
      )`);
    await q.query(
      `CREATE INDEX environment_rows_page_idx ON environment_rows (project_id, kind, first_seen DESC, id DESC)`,
    );
    await q.query(`
      CREATE TABLE evidence_observations (
        row_id uuid NOT NULL REFERENCES environment_rows(id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        method text NOT NULL,
        path text NOT NULL,
        status smallint NOT NULL,
        request_content_type text,
        request_shape text,
        response_content_type text,
        response_shape text,
        count bigint NOT NULL,
        last_seen timestamptz NOT NULL
      )`);
    // One row per distinct exchange shape per environment row (NULL folded to ' ' as in observations).
    await q.query(`
      CREATE UNIQUE INDEX evidence_observations_key ON evidence_observations (
        row_id, method, path, status,
        (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
        (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' '))
      )`);
    // Finds the rows that saw an endpoint when a new version of it is made.
    await q.query(
      `CREATE INDEX evidence_observations_endpoint_idx ON evidence_observations (project_id, method, path, row_id)`,
    );
    await q.query(`
      CREATE TABLE evidence_cells (
        row_id uuid NOT NULL REFERENCES environment_rows(id) ON DELETE CASCADE,
        endpoint_id uuid NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
        -- NULL: drift (no version conforms); version then names the nearest one
        version_id uuid REFERENCES endpoint_versions(id) ON DELETE SET NULL,
        version text NOT NULL,
        drift boolean NOT NULL,
        last_seen timestamptz NOT NULL,
        PRIMARY KEY (row_id, endpoint_id)
      )`);
    await q.query(`CREATE INDEX evidence_cells_endpoint_idx ON evidence_cells (endpoint_id)`);
    await q.query(`
      CREATE TABLE evidence_current (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        kind text NOT NULL,
        scope text NOT NULL,
        endpoint_id uuid NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
        row_id uuid NOT NULL REFERENCES environment_rows(id) ON DELETE CASCADE,
        row_first_seen timestamptz NOT NULL,
        version_id uuid REFERENCES endpoint_versions(id) ON DELETE SET NULL,
        version text NOT NULL,
        drift boolean NOT NULL,
        last_seen timestamptz NOT NULL,
        PRIMARY KEY (project_id, kind, scope, endpoint_id)
      )`);
    await q.query(`CREATE INDEX evidence_current_row_idx ON evidence_current (row_id)`);
    // "The newest evidence of any pull request" per endpoint (evidence for ci without a pull request).
    await q.query(
      `CREATE INDEX evidence_current_newest_idx ON evidence_current (project_id, kind, endpoint_id, row_first_seen DESC)`,
    );
    await q.query(`
      CREATE TABLE proposal_endpoints (
        id bigserial PRIMARY KEY,
        proposal_id uuid NOT NULL REFERENCES proposals(id) ON DELETE CASCADE,
        position integer NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        description text,
        -- extend: observed shapes merged into the documented ones at approval; replace: planned shapes
        mode text NOT NULL CONSTRAINT proposal_endpoints_mode_known CHECK (mode IN ('extend', 'replace')),
        request jsonb,
        responses jsonb NOT NULL,
        CONSTRAINT proposal_endpoints_once UNIQUE (proposal_id, method, path)
      )`);
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        url text NOT NULL,
        secret text NOT NULL,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_project_idx ON webhooks (project_id)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        -- the order events were emitted in: deliveries are claimed and sent in this order
        seq bigserial NOT NULL,
        webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id uuid NOT NULL,
        event_type text NOT NULL,
        -- the exact bytes sent and signed (jsonb would reorder keys)
        body text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CONSTRAINT webhook_deliveries_status_known CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        last_status integer,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        delivered_at timestamptz,
        CONSTRAINT webhook_deliveries_once UNIQUE (webhook_id, event_id)
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, seq) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (webhook_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'webhook_deliveries',
      'webhooks',
      'proposal_endpoints',
      'evidence_current',
      'evidence_cells',
      'evidence_observations',
      'environment_rows',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
