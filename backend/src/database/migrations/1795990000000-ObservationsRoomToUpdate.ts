import type { MigrationInterface, QueryRunner } from 'typeorm';
import { leafPartitions } from './1795932641608-RuntimeRowsRoomToUpdate';

/**
 * Room on the pages of observations (issue 20): every batch updates the rows of the keys its
 * capture has seen before (their counts, last seen), and at the default fillfactor (100) the
 * current partition's pages are filled by inserts of every capture at once, so an update often
 * found no room on its page and wrote its row elsewhere and a new entry in the aggregate key's
 * index (wide: ten columns). At 80 nearly every such update stays on its page (heap-only):
 * batch-cpu.bench's counts, per 40-row batch, 4.7 → 0.1 updates not heap-only and 31.0 → 28.4 KB
 * of WAL (the plain INSERT of the same rows 18.1 → 16.2 KB). Partitions made from now on get it
 * from `OBSERVATIONS` (partitions/partitions.ts); this sets it on those made before. Applies to
 * pages written from now on.
 */
export class ObservationsRoomToUpdate1795990000000 implements MigrationInterface {
  name = 'ObservationsRoomToUpdate1795990000000';

  async up(q: QueryRunner): Promise<void> {
    for (const partition of await leafPartitions(q, ['observations']))
      await q.query(`ALTER TABLE ${partition} SET (fillfactor = 80)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const partition of await leafPartitions(q, ['observations']))
      await q.query(`ALTER TABLE ${partition} RESET (fillfactor)`);
  }
}
