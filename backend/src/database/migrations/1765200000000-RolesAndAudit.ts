import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Project roles for people (issue 16): `project_members` holds roles an admin gave a person,
 * `project_group_roles` the role a provider group gives its members in a project; a person's role
 * is the strongest of them. `projects.four_eyes` makes a proposal's author unable to approve it,
 * for which `proposals.author` keeps who made it (`person:<users.id>` or `token:<tokens.id>`).
 * Tokens remember the person who made them. `audit_events` records who did what in a project: the
 * actor's name, email and provider subject (or the token) are copied, so the record stays true
 * when the person or token changes later.
 */
export class RolesAndAudit1765200000000 implements MigrationInterface {
  name = 'RolesAndAudit1765200000000';

  async up(q: QueryRunner): Promise<void> {
    const role = `text NOT NULL CHECK (role IN ('viewer', 'editor', 'approver', 'admin'))`;
    await q.query(`
      CREATE TABLE project_members (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role ${role},
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, user_id)
      )`);
    await q.query('CREATE INDEX project_members_user_idx ON project_members (user_id)');
    await q.query(`
      CREATE TABLE project_group_roles (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        group_name text NOT NULL CHECK (length(group_name) BETWEEN 1 AND 400),
        role ${role},
        PRIMARY KEY (project_id, group_name)
      )`);
    await q.query('CREATE INDEX project_group_roles_group_idx ON project_group_roles (group_name)');
    await q.query('ALTER TABLE projects ADD COLUMN four_eyes boolean NOT NULL DEFAULT false');
    await q.query('ALTER TABLE proposals ADD COLUMN author text');
    await q.query('ALTER TABLE tokens ADD COLUMN created_by uuid REFERENCES users(id) ON DELETE SET NULL');
    await q.query(`
      CREATE TABLE audit_events (
        id bigserial PRIMARY KEY,
        project_id uuid REFERENCES projects(id) ON DELETE CASCADE,
        at timestamptz NOT NULL DEFAULT now(),
        action text NOT NULL,
        actor_kind text NOT NULL CHECK (actor_kind IN ('person', 'token', 'system')),
        actor_id uuid,
        actor_name text,
        actor_email text,
        actor_subject text,
        target text,
        details jsonb NOT NULL DEFAULT '{}'
      )`);
    await q.query('CREATE INDEX audit_events_project_idx ON audit_events (project_id, id DESC)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE audit_events');
    await q.query('ALTER TABLE tokens DROP COLUMN created_by');
    await q.query('ALTER TABLE proposals DROP COLUMN author');
    await q.query('ALTER TABLE projects DROP COLUMN four_eyes');
    await q.query('DROP TABLE project_group_roles');
    await q.query('DROP TABLE project_members');
  }
}
