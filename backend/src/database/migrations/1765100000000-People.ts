import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * People sign in through an OpenID Connect provider (issue 16). `users` keeps what the provider
 * said at the last sign-in (issuer + subject identify a person; name, email and groups are shown
 * and mapped to roles). `sessions` are server-side: the cookie holds an opaque id whose SHA-256 is
 * the key, so a database dump holds no usable session. `sign_in_requests` hold a started sign-in
 * (state, nonce, PKCE verifier) until the provider sends the person back; the callback deletes the
 * row it uses, so a replayed callback finds nothing.
 */
export class People1765100000000 implements MigrationInterface {
  name = 'People1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        issuer text NOT NULL,
        subject text NOT NULL,
        name text,
        email text,
        groups text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        last_sign_in_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_identity_unique UNIQUE (issuer, subject)
      )`);
    await q.query(`
      CREATE TABLE sessions (
        id_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query('CREATE INDEX sessions_user_idx ON sessions (user_id)');
    await q.query('CREATE INDEX sessions_expires_idx ON sessions (expires_at)');
    await q.query(`
      CREATE TABLE sign_in_requests (
        state text PRIMARY KEY,
        nonce text NOT NULL,
        code_verifier text NOT NULL,
        return_to text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX sign_in_requests_created_idx ON sign_in_requests (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE sign_in_requests');
    await q.query('DROP TABLE sessions');
    await q.query('DROP TABLE users');
  }
}
