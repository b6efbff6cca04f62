import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The histograms of the runtime minutes waiting for the roll-up as text (issue 20, session 32):
 * every fold inserts one row per endpoint and minute, and as `jsonb` PostgreSQL parsed both of its
 * histograms on the way in and printed them again for the roll-up (which reads them as text), and
 * stored a small histogram in more bytes than its text. The replica writes them (`JSON.stringify`
 * of histograms it made), so they are valid JSON; the reads that add waiting minutes to stored
 * rows read them as `jsonb` (`runtimeRows`). Measured alone (300 minutes a fold, embedded
 * PostgreSQL, the fold's insert as it runs): WAL 186 → 144 KB a fold.
 */
export class RuntimeMinutesAddedAsText1796000000001 implements MigrationInterface {
  name = 'RuntimeMinutesAddedAsText1796000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE runtime_minutes_added ALTER COLUMN ttfb TYPE text USING ttfb::text, ALTER COLUMN ttlb TYPE text USING ttlb::text',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE runtime_minutes_added ALTER COLUMN ttfb TYPE jsonb USING ttfb::jsonb, ALTER COLUMN ttlb TYPE jsonb USING ttlb::jsonb',
    );
  }
}
