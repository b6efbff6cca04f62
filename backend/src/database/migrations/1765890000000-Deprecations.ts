import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Marks that part of an endpoint is deprecated (issue 19, usage): the endpoint, a query parameter,
 * a request header, a request or response field (its JSON path), marked by a person in the
 * dashboard or by an OpenAPI import (`deprecated: true`). Keyed by method and path, not the
 * endpoint's id, so undocumented traffic can be marked too. Zombies are what is marked and still called.
 */
export class Deprecations1765890000000 implements MigrationInterface {
  name = 'Deprecations1765890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE deprecations (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        method text NOT NULL,
        path text NOT NULL,
        location text NOT NULL
          CONSTRAINT deprecations_location_known CHECK (location IN ('endpoint', 'query', 'header', 'request', 'response')),
        -- '' for the endpoint itself
        name text NOT NULL,
        source text NOT NULL CONSTRAINT deprecations_source_known CHECK (source IN ('openapi', 'dashboard')),
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, method, path, location, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE deprecations');
  }
}
