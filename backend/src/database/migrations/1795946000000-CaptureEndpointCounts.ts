import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many endpoints (summaries in `capture_endpoints`) each capture has, kept beside it (issue
 * 20): the batch statement checked the capture's cap of endpoints by reading the summary of every
 * endpoint of the batch and, when one was new, counting the capture's summaries, in every batch
 * (a tenth of its PostgreSQL CPU). With the count kept, a batch whose endpoints all fit under the
 * cap, even were every one new, reads none of them.
 *
 * The count is split over slots, one per database session (`pg_backend_pid()`) that added or
 * removed summaries of the capture: a session runs one transaction at a time, so no two open
 * transactions write one row, and concurrent batches of one capture never wait for each other
 * (a count on the capture row did: scale18b, session 18). The count is the sum of the slots, each
 * written in the transaction that writes the summaries, so it is exact. Counted here from the
 * stored summaries (slot 0). Like the summaries, the counts have no foreign key to their capture
 * (the batch statement locks it `FOR KEY SHARE`; migration IngestWithoutRowForeignKeys): the
 * trigger `captures_rows_deleted` deletes them with the capture.
 */
export class CaptureEndpointCounts1795946000000 implements MigrationInterface {
  name = 'CaptureEndpointCounts1795946000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE capture_endpoint_counts (
        project_id uuid NOT NULL,
        capture_id uuid NOT NULL,
        slot integer NOT NULL,
        endpoints integer NOT NULL,
        PRIMARY KEY (capture_id, slot, project_id)
      )`);
    await q.query(
      `INSERT INTO capture_endpoint_counts (project_id, capture_id, slot, endpoints)
       SELECT project_id, capture_id, 0, count(*)::int FROM capture_endpoints GROUP BY project_id, capture_id`,
    );
    await q.query(capturesRowsDeleted(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(capturesRowsDeleted(false));
    await q.query('DROP TABLE capture_endpoint_counts');
  }
}

/** The cascade of a capture's delete to its rows (see IngestWithoutRowForeignKeys), with or without the counts. */
function capturesRowsDeleted(withCounts: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION captures_rows_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM observations o USING gone g
       WHERE o.project_id = g.project_id AND o.capture_id = g.id AND o.capture_created_at = g.created_at;
      DELETE FROM capture_endpoints ce USING gone g WHERE ce.project_id = g.project_id AND ce.capture_id = g.id;
      ${withCounts ? 'DELETE FROM capture_endpoint_counts n USING gone g WHERE n.project_id = g.project_id AND n.capture_id = g.id;' : ''}
      DELETE FROM processed_batches b USING gone g WHERE b.project_id = g.project_id AND b.capture_id = g.id;
      RETURN NULL;
    END $$`;
}
