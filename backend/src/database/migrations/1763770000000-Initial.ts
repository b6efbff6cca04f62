import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The first schema: projects, tokens, agents, captures, content-addressed shapes, aggregated
 * observations, idempotent batch ids, and the documentation model (endpoints, versions,
 * proposals, proposal steps) that versions and evidence build on.
 */
export class Initial1763770000000 implements MigrationInterface {
  name = 'Initial1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        slug text NOT NULL CONSTRAINT projects_slug_format CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
        name text NOT NULL CONSTRAINT projects_name_length CHECK (length(name) BETWEEN 1 AND 200),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT projects_slug_unique UNIQUE (slug)
      )`);
    await q.query(`
      CREATE TABLE tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        scope text NOT NULL CONSTRAINT tokens_scope_known CHECK (scope IN ('agent', 'read', 'write', 'admin')),
        environments text[],
        token_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz,
        CONSTRAINT tokens_hash_unique UNIQUE (token_hash),
        -- only the bootstrap admin token lives outside a project
        CONSTRAINT tokens_project_unless_admin CHECK (project_id IS NOT NULL OR scope = 'admin'),
        CONSTRAINT tokens_environments_known CHECK (environments IS NULL OR environments <@ ARRAY['local', 'ci', 'staging', 'production'])
      )`);
    await q.query(`CREATE INDEX tokens_project_idx ON tokens (project_id)`);
    await q.query(`
      CREATE TABLE agents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        agent_key text NOT NULL,
        token_id uuid REFERENCES tokens(id) ON DELETE SET NULL,
        agent_version text NOT NULL,
        environment_kind text NOT NULL,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT agents_key_unique UNIQUE (project_id, agent_key)
      )`);
    await q.query(`
      CREATE TABLE captures (
        id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        agent_id uuid REFERENCES agents(id) ON DELETE SET NULL,
        environment_kind text NOT NULL CONSTRAINT captures_environment_known CHECK (environment_kind IN ('local', 'ci', 'staging', 'production')),
        environment_name text NOT NULL,
        pull_request text,
        commit text,
        build text,
        reason text NOT NULL,
        started_at timestamptz NOT NULL,
        ended_at timestamptz,
        rules text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX captures_project_started_idx ON captures (project_id, started_at DESC, id)`);
    await q.query(
      `CREATE INDEX captures_project_environment_idx ON captures (project_id, environment_kind, environment_name)`,
    );
    await q.query(`
      CREATE TABLE shapes (
        fingerprint text PRIMARY KEY,
        shape jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE observations (
        id bigserial PRIMARY KEY,
        capture_id uuid NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
        method text NOT NULL,
        path text NOT NULL,
        status smallint NOT NULL CONSTRAINT observations_status_range CHECK (status BETWEEN 100 AND 599),
        request_content_type text,
        request_shape text REFERENCES shapes(fingerprint),
        request_note text,
        response_content_type text,
        response_shape text REFERENCES shapes(fingerprint),
        response_note text,
        query text[] NOT NULL DEFAULT '{}',
        request_headers text[] NOT NULL DEFAULT '{}',
        response_headers text[] NOT NULL DEFAULT '{}',
        count bigint NOT NULL CONSTRAINT observations_count_positive CHECK (count > 0),
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL
      )`);
    // One aggregated row per (capture, method, path, status, request body, response body).
    // NULL (no body / no shape) is folded to ' ', which no media type or fingerprint contains.
    await q.query(`
      CREATE UNIQUE INDEX observations_aggregate_key ON observations (
        capture_id, method, path, status,
        (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
        (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' '))
      )`);
    await q.query(`
      CREATE TABLE processed_batches (
        batch_id uuid PRIMARY KEY,
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        capture_id uuid NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
        observations integer NOT NULL,
        committed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX processed_batches_committed_idx ON processed_batches (committed_at)`);
    await q.query(`
      CREATE TABLE proposals (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        title text NOT NULL,
        description text NOT NULL DEFAULT '',
        status text NOT NULL CONSTRAINT proposals_status_known
          CHECK (status IN ('Open', 'Approved', 'Implemented', 'Appeared in Staging', 'Appeared in Production')),
        source_capture_id uuid REFERENCES captures(id) ON DELETE SET NULL,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        approved_by text,
        approved_at timestamptz
      )`);
    await q.query(`CREATE INDEX proposals_project_created_idx ON proposals (project_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE proposal_steps (
        id bigserial PRIMARY KEY,
        proposal_id uuid NOT NULL REFERENCES proposals(id) ON DELETE CASCADE,
        step text NOT NULL CONSTRAINT proposal_steps_step_known
          CHECK (step IN ('Approved', 'Implemented', 'Appeared in Staging', 'Appeared in Production')),
        actor text,
        at timestamptz NOT NULL DEFAULT now(),
        pull_request text,
        build text,
        commit text,
        capture_id uuid REFERENCES captures(id) ON DELETE SET NULL,
        CONSTRAINT proposal_steps_once UNIQUE (proposal_id, step)
      )`);
    await q.query(`
      CREATE TABLE endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        method text NOT NULL,
        path text NOT NULL,
        description text NOT NULL DEFAULT '',
        current_version_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT endpoints_method_path_unique UNIQUE (project_id, method, path)
      )`);
    await q.query(`
      CREATE TABLE endpoint_versions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        endpoint_id uuid NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
        major integer NOT NULL CONSTRAINT endpoint_versions_major_range CHECK (major >= 0),
        minor integer NOT NULL CONSTRAINT endpoint_versions_minor_range CHECK (minor >= 0),
        description text NOT NULL DEFAULT '',
        -- EndpointShapes of @spectator/shared: {contentType, shape} | null and [{status, contentType, shape}]
        request jsonb,
        responses jsonb NOT NULL DEFAULT '[]',
        changes jsonb NOT NULL DEFAULT '[]',
        proposal_id uuid REFERENCES proposals(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT endpoint_versions_number_unique UNIQUE (endpoint_id, major, minor)
      )`);
    await q.query(`CREATE INDEX endpoint_versions_proposal_idx ON endpoint_versions (proposal_id)`);
    await q.query(`
      ALTER TABLE endpoints ADD CONSTRAINT endpoints_current_version_fk
        FOREIGN KEY (current_version_id) REFERENCES endpoint_versions(id) ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE endpoints DROP CONSTRAINT endpoints_current_version_fk`);
    for (const table of [
      'endpoint_versions',
      'endpoints',
      'proposal_steps',
      'proposals',
      'processed_batches',
      'observations',
      'shapes',
      'captures',
      'agents',
      'tokens',
      'projects',
    ]) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
