import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documented query parameters and request headers (`{query, headers}`, each a list of
 * `{name, required}`) per endpoint version and per proposed endpoint. Null: not documented, so
 * never compared with traffic; every version written before keeps behaving as it did. Evidence
 * keeps the names seen per stored exchange (a union, like observations; null for exchanges
 * recorded before, which are then not compared on names).
 */
export class EndpointParameters1764400000000 implements MigrationInterface {
  name = 'EndpointParameters1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE endpoint_versions ADD COLUMN parameters jsonb');
    await q.query('ALTER TABLE proposal_endpoints ADD COLUMN parameters jsonb');
    await q.query('ALTER TABLE evidence_observations ADD COLUMN query text[], ADD COLUMN request_headers text[]');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE evidence_observations DROP COLUMN request_headers, DROP COLUMN query');
    await q.query('ALTER TABLE proposal_endpoints DROP COLUMN parameters');
    await q.query('ALTER TABLE endpoint_versions DROP COLUMN parameters');
  }
}
