import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The queued batch's packed lists (evidence/queued-payload.ts). */
const COLUMNS = ['packed_exchanges', 'packed_minutes', 'packed_consumers'];

/**
 * A queued batch's packed lists stay in its `evidence_queue` row, compressed (issue 20): at the
 * default storage (`EXTENDED`) a scale batch's lists (22 KB of JSON text, ~2.9 KB compressed) passed
 * the 2 KB at which PostgreSQL moves values out of line, so every batch also wrote a TOAST row and
 * its index entry, and every fold deleted the TOAST rows again: 6 WAL records and ~3.5 KB a batch
 * queued, 2–2.5 records taken, against 4 records and ~3.25 KB, and 1 record, with `MAIN`. `MAIN`
 * still compresses, and still moves a value out of line when the row would not fit a page
 * otherwise (a batch of very many rows). Applies to rows queued from now on.
 */
export class QueuedEvidenceInline1795975000000 implements MigrationInterface {
  name = 'QueuedEvidenceInline1795975000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE evidence_queue ${COLUMNS.map((column) => `ALTER COLUMN ${column} SET STORAGE MAIN`).join(', ')}`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE evidence_queue ${COLUMNS.map((column) => `ALTER COLUMN ${column} SET STORAGE EXTENDED`).join(', ')}`,
    );
  }
}
