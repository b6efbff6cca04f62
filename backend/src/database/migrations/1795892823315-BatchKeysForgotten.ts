import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Batch ids keep the (method, path) keys their batch touched only while a kept capture view may
 * patch itself from them (an hour, `MAX_PATCHED_AGE_SECONDS`); after that every replica sets them
 * to NULL (`IngestService`, every ten minutes), leaving the batch id, its capture and transaction
 * for resend deduplication (issue 20: the keys were 1.1–1.6 KB of a batch id row kept 30 days).
 *  - a BRIN index on `committed_at` finds the rows of a time range (batch ids are appended in
 *    commit order, so each range of pages spans a short time): the forgetting job and the pruning
 *    of expired ids read only those pages instead of the whole table. A BRIN index is a few pages
 *    for millions of rows, and an insert into pages not yet summarised writes nothing to it.
 *  - fillfactor 90 leaves room on each page, so the update that drops the keys stays on the page
 *    (HOT: no index entries, the rows keep their time order for the BRIN index).
 */
export class BatchKeysForgotten1795892823315 implements MigrationInterface {
  name = 'BatchKeysForgotten1795892823315';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE processed_batches SET (fillfactor = 90)');
    await q.query('CREATE INDEX processed_batches_committed_brin ON processed_batches USING brin (committed_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX processed_batches_committed_brin');
    await q.query('ALTER TABLE processed_batches RESET (fillfactor)');
  }
}
