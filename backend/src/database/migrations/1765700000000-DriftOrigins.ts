import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where drift began (issue 18): `drift_origins` keeps, per endpoint, exchange signature (status,
 * content types and shape fingerprints of traffic that conformed to no version there) and kind of
 * environment, the first row that showed it; `drift_cells` keeps each drifting cell with the
 * signatures that make it drift, so its origins are one join. Both are written by the drift
 * listener in the batch's transaction (drift/drift.service.ts).
 */
export class DriftOrigins1765700000000 implements MigrationInterface {
  name = 'DriftOrigins1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE drift_origins (
        endpoint_id uuid NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
        signature text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('ci', 'staging', 'production')),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        row_name text NOT NULL,
        pull_request text,
        build text,
        commit text,
        seen_at timestamptz NOT NULL,
        PRIMARY KEY (endpoint_id, signature, kind)
      )`);
    await q.query(`
      CREATE TABLE drift_cells (
        row_id uuid NOT NULL REFERENCES environment_rows(id) ON DELETE CASCADE,
        endpoint_id uuid NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        kind text NOT NULL,
        name text NOT NULL,
        pull_request text,
        build text,
        commit text,
        method text NOT NULL,
        path text NOT NULL,
        version text NOT NULL,
        signatures text[] NOT NULL,
        PRIMARY KEY (row_id, endpoint_id)
      )`);
    await q.query('CREATE INDEX drift_cells_project_idx ON drift_cells (project_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE drift_cells');
    await q.query('DROP TABLE drift_origins');
  }
}
