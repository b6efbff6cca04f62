import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { PARTITION_NAME, type PartitionedTable, type RangePartition } from './partitions';

/** A partition as stored: a range partition's bounds, none for a default partition. */
export interface StoredPartition {
  name: string;
  from: Date | null;
  to: Date | null;
}

/** Taken by whoever makes or drops a partition (of any table), so replicas do it one at a time. */
export const PARTITIONS_LOCK = 'spectator-partitions';
/** How long making or dropping a partition waits for a table's lock before it gives up until the next run. */
const LOCK_TIMEOUT = '5s';

/** A partition's name checked to be one of ours before it goes into SQL. */
export function checkedName(name: string): string {
  if (!PARTITION_NAME.test(name)) throw new Error(`not a partition: ${JSON.stringify(name)}`);
  return name;
}

/** A column name from partitions.ts checked to be a plain identifier before it goes into SQL. */
function checkedColumn(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a column: ${JSON.stringify(name)}`);
  return name;
}

/** The SQL of partitions of the tables partitioned by time (partitions/partitions.ts), raw SQL in one style. */
@Injectable()
export class PartitionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The partitions of `parent`: each range partition with its bounds, the default partition with
   * none, oldest first. Tables not named as partitions/partitions.ts names them are left out.
   */
  async stored(parent: string): Promise<StoredPartition[]> {
    const rows = (await this.db.query(
      `SELECT c.relname AS name,
              (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz AS "from",
              (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS "to"
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = to_regclass($1)
        ORDER BY 2 NULLS FIRST`,
      [parent],
    )) as StoredPartition[];
    return rows.filter((p) => PARTITION_NAME.test(p.name));
  }

  /**
   * Makes a partition of `table` unless it exists: a table of its own like the parent, filled with
   * the rows of its range that the default partition holds (when the table has one), then
   * attached, which takes a lock that lets the parent's rows be written and read meanwhile (only
   * the default partition is locked out). The replicas make partitions one at a time (an
   * advisory lock), and find those another made.
   * @returns whether it was made.
   */
  add(table: PartitionedTable, partition: RangePartition): Promise<boolean> {
    const name = checkedName(partition.name);
    const parent = table.parent;
    return this.db.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [PARTITIONS_LOCK]);
      const [{ exists }] = (await manager.query('SELECT to_regclass($1) IS NOT NULL AS exists', [name])) as [
        { exists: boolean },
      ];
      if (exists) return false;
      // Waiting long for a lock here would hold up the writes queued behind it: try again later.
      await manager.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      const storage = table.fillfactor === undefined ? '' : ` WITH (fillfactor = ${Math.trunc(table.fillfactor)})`;
      await manager.query(`CREATE TABLE ${name} (LIKE ${parent} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)${storage}`);
      const unanalysed = table.withoutStatistics ?? [];
      if (unanalysed.length > 0)
        await manager.query(
          `ALTER TABLE ${name} ${unanalysed.map((column) => `ALTER COLUMN ${checkedColumn(column)} SET STATISTICS 0`).join(', ')}`,
        );
      if (table.withDefault) {
        await manager.query(`LOCK TABLE ${parent}_default IN ACCESS EXCLUSIVE MODE`);
        await manager.query(
          `WITH moved AS (DELETE FROM ${parent}_default WHERE ${table.column} >= $1 AND ${table.column} < $2 RETURNING *)
           INSERT INTO ${name} SELECT * FROM moved`,
          [partition.from, partition.to],
        );
      }
      await manager.query(
        `ALTER TABLE ${parent} ATTACH PARTITION ${name}
           FOR VALUES FROM ('${partition.from.toISOString()}') TO ('${partition.to.toISOString()}')`,
      );
      return true;
    });
  }

  /** Drops a partition (all of it past retention). @returns how many rows it held. */
  drop(name: string): Promise<number> {
    const table = checkedName(name);
    return this.db.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [PARTITIONS_LOCK]);
      const [{ exists }] = (await manager.query('SELECT to_regclass($1) IS NOT NULL AS exists', [table])) as [
        { exists: boolean },
      ];
      if (!exists) return 0;
      await manager.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      const [{ rows }] = (await manager.query(`SELECT count(*)::int AS rows FROM ${table}`)) as [{ rows: number }];
      await manager.query(`DROP TABLE ${table}`);
      return rows;
    });
  }
}
