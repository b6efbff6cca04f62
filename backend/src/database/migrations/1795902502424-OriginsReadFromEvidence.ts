import type { MigrationInterface, QueryRunner } from 'typeorm';
import { makeExchangeOrigins } from './1795890573516-ExchangeOrigins';

/**
 * Where a diff's traffic was first seen (issue 18) without a row every fold of a kind writes (issue
 * 20): `exchange_origins` kept one first row per project, distinct exchange and kind, so folds of
 * two rows bringing the same new exchange inserted the same key and the second waited for the
 * first's commit (135 and 209 ms in two of five full-size scale runs). Each row's evidence already
 * keeps when it first had each exchange and the commit and build that brought it; it now also
 * keeps its row's kind and first evidence (both fixed when the row is made), and one index orders
 * a project's evidence of each exchange and kind as the origin is chosen (the exchange's
 * `first_seen`, then the row's, then its id): the first row is one index probe, read where it is
 * asked for, and no fold writes anything another row's fold writes. The table goes; `down` makes
 * it again from the evidence.
 */
export class OriginsReadFromEvidence1795902502424 implements MigrationInterface {
  name = 'OriginsReadFromEvidence1795902502424';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE evidence_observations ADD COLUMN kind text, ADD COLUMN row_first_seen timestamptz');
    await q.query(`
      UPDATE evidence_observations o SET kind = r.kind, row_first_seen = r.first_seen
        FROM environment_rows r WHERE r.id = o.row_id`);
    await q.query(
      'ALTER TABLE evidence_observations ALTER COLUMN kind SET NOT NULL, ALTER COLUMN row_first_seen SET NOT NULL',
    );
    await q.query(`
      CREATE INDEX evidence_observations_origin_idx ON evidence_observations (
        project_id, method, path, status,
        (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
        (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')),
        kind, first_seen, row_first_seen, row_id
      )`);
    await q.query('DROP TABLE exchange_origins');
  }

  async down(q: QueryRunner): Promise<void> {
    await makeExchangeOrigins(q);
    await q.query('DROP INDEX evidence_observations_origin_idx');
    await q.query('ALTER TABLE evidence_observations DROP COLUMN kind, DROP COLUMN row_first_seen');
  }
}
