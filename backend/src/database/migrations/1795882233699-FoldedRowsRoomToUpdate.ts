import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rows every evidence fold updates (issue 20: each fold adds to the same distinct exchanges,
 * cells, "what runs there now" and consumer days of its environment row) get room on their page:
 * an update that finds room there and changes no indexed column is heap-only (HOT) and writes no
 * index entry, where otherwise it writes one in every index (4 for `consumer_calls`). At the
 * default (100) pages are filled by inserts, and about half of these updates were not HOT in the
 * scale bench. Applies to pages written from now on; `VACUUM FULL` would rewrite the old ones.
 */
const TABLES = ['consumer_calls', 'evidence_observations', 'evidence_cells', 'evidence_current'];

export class FoldedRowsRoomToUpdate1795882233699 implements MigrationInterface {
  name = 'FoldedRowsRoomToUpdate1795882233699';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} SET (fillfactor = 70)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} RESET (fillfactor)`);
  }
}
