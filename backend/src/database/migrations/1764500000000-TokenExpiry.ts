import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tokens may expire: `expires_at` (null = never). An expired token is refused like a revoked one,
 * and open WebSockets authenticated with it are closed (see TokenWatch). No CHECK against
 * `created_at`: the service validates against its own clock, and a CHECK on the database's clock
 * could refuse (with a 500) what the service accepted when the two clocks differ.
 */
export class TokenExpiry1764500000000 implements MigrationInterface {
  name = 'TokenExpiry1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tokens ADD COLUMN expires_at timestamptz');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE tokens DROP COLUMN expires_at');
  }
}
