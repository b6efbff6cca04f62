import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables whose children now all reference them with their project: their key becomes (id, project_id). */
const PARENTS = ['endpoints', 'environment_rows', 'proposals'];

/** The foreign keys that reference `table`, with their definitions (to put back as they were). */
async function referencing(
  q: QueryRunner,
  table: string,
): Promise<Array<{ referrer: string; name: string; definition: string }>> {
  return (await q.query(
    `SELECT conrelid::regclass::text AS referrer, conname AS name, pg_get_constraintdef(oid) AS definition
       FROM pg_constraint WHERE contype = 'f' AND confrelid = $1::regclass AND conparentid = 0 ORDER BY 1, 2`,
    [table],
  )) as Array<{ referrer: string; name: string; definition: string }>;
}

/** Replaces `table`'s keys by `keys` (SQL of ALTER TABLE actions), the foreign keys to it dropped meanwhile. */
export async function rekey(q: QueryRunner, table: string, keys: string): Promise<void> {
  const foreignKeys = await referencing(q, table);
  for (const fk of foreignKeys) await q.query(`ALTER TABLE ${fk.referrer} DROP CONSTRAINT ${fk.name}`);
  await q.query(`ALTER TABLE ${table} ${keys}`);
  for (const fk of foreignKeys) await q.query(`ALTER TABLE ${fk.referrer} ADD CONSTRAINT ${fk.name} ${fk.definition}`);
}

/**
 * The last step for endpoints, environment rows and proposals (issue 20, "Past one PostgreSQL"):
 * every table that references them does so with their project (earlier migrations), so their
 * primary key on the id alone gives way to (id, project_id), the unique key those references used.
 * A distributed PostgreSQL (Citus, by `project_id`) accepts that key; reads by id alone keep using
 * its index (it starts with the id). The referencing foreign keys are put back as they were.
 */
export class ParentsKeyedByProject1766000000000 implements MigrationInterface {
  name = 'ParentsKeyedByProject1766000000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of PARENTS)
      await rekey(
        q,
        table,
        `DROP CONSTRAINT ${table}_id_project_unique, DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (id, project_id)`,
      );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of PARENTS)
      await rekey(
        q,
        table,
        `DROP CONSTRAINT ${table}_pkey, ADD PRIMARY KEY (id), ADD CONSTRAINT ${table}_id_project_unique UNIQUE (id, project_id)`,
      );
  }
}
