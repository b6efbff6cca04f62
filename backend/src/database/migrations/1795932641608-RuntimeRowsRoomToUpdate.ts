import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The partitioned tables whose partitions keep room to update (`RUNTIME_ROWS`' `fillfactor`). */
const PARENTS = ['runtime_buckets_hour', 'runtime_buckets_day'];

/**
 * Room on the pages of runtime hour and day rows (issue 18): every roll-up rewrites the hour and
 * day rows that had traffic since the last one (every 10 s by default), and at the default
 * fillfactor (100) most of those updates found no room on their page and wrote a new entry in the
 * primary key (14 % heap-only in runtime-fold.bench's folds and roll-ups; 78 % at 70). Partitions made
 * from now on get it from `RUNTIME_ROWS` (partitions/partitions.ts); this sets it on those made
 * before, the default partitions included. Applies to pages written from now on.
 */
export class RuntimeRowsRoomToUpdate1795932641608 implements MigrationInterface {
  name = 'RuntimeRowsRoomToUpdate1795932641608';

  async up(q: QueryRunner): Promise<void> {
    for (const partition of await leafPartitions(q, PARENTS))
      await q.query(`ALTER TABLE ${partition} SET (fillfactor = 70)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const partition of await leafPartitions(q, PARENTS))
      await q.query(`ALTER TABLE ${partition} RESET (fillfactor)`);
  }
}

/** The leaf partitions of `parents`, quoted as identifiers. */
export async function leafPartitions(q: QueryRunner, parents: readonly string[]): Promise<string[]> {
  const rows = (await q.query(
    `SELECT quote_ident(c.relname) AS name
       FROM unnest($1::text[]) AS p(parent)
      CROSS JOIN LATERAL pg_partition_tree(p.parent::regclass) t
       JOIN pg_class c ON c.oid = t.relid
      WHERE t.isleaf`,
    [parents],
  )) as Array<{ name: string }>;
  return rows.map((row) => row.name);
}
