import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ID token of a person's sign-in, kept with the session only to end the provider's session at
 * sign-out (RP-initiated logout's `id_token_hint`, which lets the provider skip its "sign out of
 * Spectator?" question and honour the return address). It grants nothing here: the API never
 * accepts it. Deleted with the session.
 */
export class SessionIdToken1765500000000 implements MigrationInterface {
  name = 'SessionIdToken1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions ADD COLUMN id_token text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions DROP COLUMN id_token');
  }
}
