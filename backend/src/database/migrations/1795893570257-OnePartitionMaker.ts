import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One piece of code makes the partitions of every table partitioned by time (issue 20): the
 * backend's `PartitionsService` (partitions/) makes those of observations as it makes runtime
 * rows', so the SQL function `observations_partition` that `ObservationsPartitioned1795883461504`
 * made for it goes. `down` makes it again (as that migration did).
 */
export class OnePartitionMaker1795893570257 implements MigrationInterface {
  name = 'OnePartitionMaker1795893570257';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP FUNCTION observations_partition(timestamptz)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION observations_partition(at timestamptz) RETURNS text LANGUAGE plpgsql AS $$
      DECLARE
        week timestamptz := date_trunc('week', at, 'UTC');
        partition text := 'observations_' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
      BEGIN
        -- One creator at a time over all replicas; the check below then sees the others' work.
        PERFORM pg_advisory_xact_lock(1590159105);
        IF to_regclass(quote_ident(partition)) IS NULL THEN
          EXECUTE format('CREATE TABLE %I PARTITION OF observations FOR VALUES FROM (%L) TO (%L)',
                         partition, week, week + interval '168 hours');
        END IF;
        RETURN partition;
      END $$`);
  }
}
