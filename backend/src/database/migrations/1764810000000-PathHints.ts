import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Templates users state in the dashboard ("this segment is a parameter", merging literal
 * siblings): kept per project, sent to agents after the documented templates, and what stored
 * rows were regrouped into (docs/paths.md, Hints).
 */
export class PathHints1764810000000 implements MigrationInterface {
  name = 'PathHints1764810000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE path_hints (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        template text NOT NULL,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (project_id, template)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE path_hints');
  }
}
