import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documented query parameters and request headers (`{query, headers}`, each a list of
 * `{name, required}`) per endpoint version and per proposed endpoint. Null: not documented, so
 * never compared with traffic; every version written before keeps behaving as it did.
 */
export class EndpointParameters1764400000000 implements MigrationInterface {
  name = 'EndpointParameters1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE endpoint_versions ADD COLUMN parameters jsonb');
    await q.query('ALTER TABLE proposal_endpoints ADD COLUMN parameters jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE proposal_endpoints DROP COLUMN parameters');
    await q.query('ALTER TABLE endpoint_versions DROP COLUMN parameters');
  }
}
