import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What lets a replica patch a capture view it keeps instead of computing it again: each batch's
 * `processed_batches` row records the transaction that wrote it (`xid`, the top-level
 * `pg_current_xact_id()`) and the endpoints it touched (`touched_methods[i]`, `touched_paths[i]`).
 * A view remembers the snapshot it was read in; the batches of its capture whose transaction that
 * snapshot does not see (`xid >= pg_snapshot_xmin(s) AND NOT pg_visible_in_snapshot(xid, s)`) are
 * exactly those committed since, whatever order transactions took their ids and committed in.
 *  - `xid` defaults to the inserting transaction, so any writer of batch rows records it; touched
 *    keys left NULL (a writer that does not list them, rows from before this migration) mean
 *    "unknown": the views are then computed in full. Added without a default first, then given
 *    one, so existing rows are not rewritten.
 *  - the views no longer count batches by `committed_at`: the index for that goes, one index fewer
 *    for every batch to write.
 */
export class BatchChanges1764300000000 implements MigrationInterface {
  name = 'BatchChanges1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'ALTER TABLE processed_batches ADD COLUMN xid xid8, ADD COLUMN touched_methods text[], ADD COLUMN touched_paths text[]',
    );
    await q.query('ALTER TABLE processed_batches ALTER COLUMN xid SET DEFAULT pg_current_xact_id()');
    await q.query('CREATE INDEX processed_batches_capture_xid_idx ON processed_batches (capture_id, xid)');
    await q.query('DROP INDEX processed_batches_capture_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX processed_batches_capture_idx ON processed_batches (capture_id, committed_at)');
    await q.query('DROP INDEX processed_batches_capture_xid_idx');
    await q.query(
      'ALTER TABLE processed_batches DROP COLUMN touched_paths, DROP COLUMN touched_methods, DROP COLUMN xid',
    );
  }
}
