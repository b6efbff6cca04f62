import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a diff's traffic was first seen (issue 18): `evidence_observations.first_seen`, when a row's
 * evidence first had each distinct exchange (the fold that added it; regrouping keeps the earliest),
 * so the first row of a kind to show an exchange is told by it rather than by the row's first
 * evidence. Rows kept before get the migration's time (a constant default: the table is not
 * rewritten), and among them the row's first evidence decides.
 */
export class EvidenceFirstSeen1795882936562 implements MigrationInterface {
  name = 'EvidenceFirstSeen1795882936562';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE evidence_observations ADD COLUMN first_seen timestamptz NOT NULL DEFAULT now()');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE evidence_observations DROP COLUMN first_seen');
  }
}
