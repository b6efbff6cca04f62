import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `observations.names_grew`: whether the row's latest upsert added a query parameter or request
 * header name to it. The batch statement sets it from the row as it was and reads it back in
 * RETURNING (which sees only the new row), to bump the endpoint's `capture_endpoints.revision`, so
 * the diffs view's stored "conforms" flag of that endpoint is checked again. Not indexed: an
 * update that sets it stays a HOT update. Added with a constant default, so no table rewrite.
 */
export class ObservationNamesGrew1764600000000 implements MigrationInterface {
  name = 'ObservationNamesGrew1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE observations ADD COLUMN names_grew boolean NOT NULL DEFAULT false');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE observations DROP COLUMN names_grew');
  }
}
