import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The literal paths a learned template covers, as the agent names them in its `learned` message:
 * digests (`pathDigest(captureId, path)`), never the paths. Rows of the capture that arrive later
 * under a literal path go under the template only when it covers that path, so a sibling the agent
 * keeps literal (`/users/me` beside `/users/{user}`) stays apart. NULL: every literal path (a
 * template from an agent that names none).
 */
export class LearnedCovers1765300000000 implements MigrationInterface {
  name = 'LearnedCovers1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE capture_learned_templates ADD COLUMN covers text[]');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE capture_learned_templates DROP COLUMN covers');
  }
}
