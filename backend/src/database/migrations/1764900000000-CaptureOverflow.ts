import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `captures.overflow_requests`: requests of endpoints a capture did not keep because it had
 * `SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE` endpoints already (issue 15). A constant default: no
 * table rewrite.
 */
export class CaptureOverflow1764900000000 implements MigrationInterface {
  name = 'CaptureOverflow1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE captures ADD COLUMN overflow_requests bigint NOT NULL DEFAULT 0');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE captures DROP COLUMN overflow_requests');
  }
}
