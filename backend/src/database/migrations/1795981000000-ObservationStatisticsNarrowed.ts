import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Observation columns written and read with their row only: never filtered, joined or grouped on. */
const COLUMNS = [
  'query',
  'request_headers',
  'response_headers',
  'request_note',
  'response_note',
  'request_instances',
  'response_instances',
];

/**
 * ANALYZE takes no statistics of observations' name lists, notes and instance digits (issue 20).
 * Streaming agents update a partition's rows (their counts) all the time, so autovacuum analyses
 * the current partition about once a minute; its three text arrays' element statistics were most of
 * each analysis's CPU (the scale bench's medium run: the partition's analyzes 7.1 of all tables'
 * 9.2 s), and no plan reads them. Set on `observations`, which passes it to every partition it has;
 * the partition maker (partitions/partitions.ts, `withoutStatistics`) sets it on each new one.
 * `down` gives the columns the default target again.
 */
export class ObservationStatisticsNarrowed1795981000000 implements MigrationInterface {
  name = 'ObservationStatisticsNarrowed1795981000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE observations ${COLUMNS.map((c) => `ALTER COLUMN ${c} SET STATISTICS 0`).join(', ')}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE observations ${COLUMNS.map((c) => `ALTER COLUMN ${c} SET STATISTICS -1`).join(', ')}`);
  }
}
