/**
 * One piece of code makes the partitions of every table partitioned by time (partitions/): the
 * current period's and the next two's at start and hourly, once however many replicas make them
 * at once, each partition like those its table's migration made.
 */
import pino from 'pino';
import type { DataSource } from 'typeorm';
import type { Runtime } from '../src/config/runtime';
import { createDataSource } from '../src/database/data-source';
import {
  OBSERVATIONS,
  PARTITIONED_TABLES,
  partitionOf,
  partitionsAhead,
  RUNTIME_ROWS,
} from '../src/partitions/partitions';
import { PartitionsRepository } from '../src/partitions/partitions.repository';
import { PartitionsService } from '../src/partitions/partitions.service';
import { createMigratedDatabase, type MigratedDatabase } from './support';

let database: MigratedDatabase;
let ds: DataSource;

beforeAll(async () => {
  database = await createMigratedDatabase();
  ds = database.ds;
});
afterAll(async () => {
  await database.close();
});

const maker = (source: DataSource): PartitionsService =>
  new PartitionsService(new PartitionsRepository(source), { log: pino({ level: 'silent' }) } as Runtime);

const names = async (parent: string): Promise<string[]> =>
  (await new PartitionsRepository(ds).stored(parent)).map((p) => p.name);

/** A partition's constraints and indexes, named apart from the partition (`<partition>_…` → `…`). */
async function shapeOf(partition: string): Promise<{ constraints: string[]; indexes: string[]; columns: string[] }> {
  const strip = (text: string) => text.replaceAll(partition, 'P');
  const constraints = (await ds.query(
    `SELECT contype::text || ' ' || pg_get_constraintdef(oid) AS c FROM pg_constraint WHERE conrelid = $1::regclass ORDER BY 1`,
    [partition],
  )) as Array<{ c: string }>;
  const indexes = (await ds.query(
    `SELECT regexp_replace(indexdef, 'INDEX \\S+ ON \\S+', 'INDEX ON') AS i FROM pg_indexes WHERE tablename = $1 ORDER BY 1`,
    [partition],
  )) as Array<{ i: string }>;
  const columns = (await ds.query(
    `SELECT attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attnotnull ||
            ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '') || ' statistics ' || coalesce(a.attstattarget, -1) AS c
       FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [partition],
  )) as Array<{ c: string }>;
  return {
    constraints: constraints.map((r) => strip(r.c)),
    indexes: indexes.map((r) => strip(r.i)),
    columns: columns.map((r) => r.c),
  };
}

/** A partition's fillfactor as set (null: PostgreSQL's default, 100). */
const fillfactorOf = async (partition: string): Promise<string | null> =>
  (
    (await ds.query(
      `SELECT (SELECT split_part(o, '=', 2) FROM unnest(reloptions) o WHERE o LIKE 'fillfactor=%') AS f
         FROM pg_class WHERE oid = $1::regclass`,
      [partition],
    )) as [{ f: string | null }]
  )[0].f;

describe('partitions by time', () => {
  it('makes the current period and the next two of every table, once however many replicas make them at once', async () => {
    // As if no replica had made the latest of each yet (the migrations made observations' three).
    const now = new Date();
    for (const table of PARTITIONED_TABLES)
      await ds.query(`DROP TABLE IF EXISTS ${(partitionsAhead(table, now).at(-1) as { name: string }).name}`);
    const missing: string[] = [];
    for (const table of PARTITIONED_TABLES) {
      const stored = await names(table.parent);
      missing.push(
        ...partitionsAhead(table, now)
          .filter((p) => !stored.includes(p.name))
          .map((p) => p.name),
      );
    }
    expect(missing).toContain(partitionsAhead(OBSERVATIONS, now).at(-1)!.name);
    const url = (ds.options as { url: string }).url;
    const sources = [createDataSource(url, { poolSize: 2 }), createDataSource(url, { poolSize: 2 })];
    await Promise.all(sources.map((source) => source.initialize()));
    try {
      const made = await Promise.all(sources.flatMap((source) => [0, 1, 2].map(() => maker(source).keep(now))));
      expect(made.flat().sort()).toEqual(missing.sort());
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
    }
    for (const table of PARTITIONED_TABLES)
      expect(await names(table.parent)).toEqual(expect.arrayContaining(partitionsAhead(table, now).map((p) => p.name)));
    expect(await maker(ds).keep(now)).toEqual([]);
  });

  it('makes a partition of observations like the one its migration made', async () => {
    // The migration made this week's; the week after the three made ahead is made here.
    const now = new Date();
    const later = new Date(now.getTime() + 21 * 24 * 3600_000);
    const made = partitionOf(OBSERVATIONS, later).name;
    expect(await maker(ds).cover([OBSERVATIONS], later, later)).toEqual([made]);
    expect(await shapeOf(made)).toEqual(await shapeOf(partitionOf(OBSERVATIONS, now).name));
  });

  it("takes no statistics of observations' name lists, notes and instance digits, in partitions made before and after", async () => {
    const later = new Date(Date.now() + 28 * 24 * 3600_000);
    const made = partitionOf(OBSERVATIONS, later).name;
    expect(await maker(ds).cover([OBSERVATIONS], later, later)).toEqual([made]);
    for (const partition of [made, partitionOf(OBSERVATIONS, new Date()).name]) {
      const unanalysed = (await ds.query(
        `SELECT attname AS name FROM pg_attribute WHERE attrelid = $1::regclass AND attstattarget = 0 ORDER BY attnum`,
        [partition],
      )) as Array<{ name: string }>;
      expect({ partition, columns: unanalysed.map((c) => c.name) }).toEqual({
        partition,
        columns: [
          'request_note',
          'response_note',
          'query',
          'request_headers',
          'response_headers',
          'request_instances',
          'response_instances',
        ],
      });
    }
  });

  it('makes a partition of runtime rows like the default one its migration made', async () => {
    const later = new Date(Date.now() + 5 * 24 * 3600_000);
    const made = partitionOf(RUNTIME_ROWS.minute, later).name;
    expect(await maker(ds).cover([RUNTIME_ROWS.minute], later, later)).toEqual([made]);
    const strip = (shape: Awaited<ReturnType<typeof shapeOf>>, name: string) =>
      JSON.parse(JSON.stringify(shape).replaceAll(name, 'P')) as unknown;
    expect(strip(await shapeOf(made), made)).toEqual(
      strip(await shapeOf('runtime_buckets_minute_default'), 'runtime_buckets_minute_default'),
    );
  });

  it('keeps room to update on the pages of hour and day rows, as the migration set on the partitions before', async () => {
    // The first month past those made ahead (Date.now() + 70 days fell inside them on 1 December).
    const later = partitionsAhead(RUNTIME_ROWS.day, new Date()).at(-1)!.to;
    const tables = [RUNTIME_ROWS.minute, RUNTIME_ROWS.hour, RUNTIME_ROWS.day];
    const made = tables.map((table) => partitionOf(table, later).name);
    expect((await maker(ds).cover(tables, later, later)).sort()).toEqual([...made].sort());
    // Made now, made earlier (this week's hours), made by the migrations (the defaults); minute rows packed.
    for (const partition of [
      made[1],
      made[2],
      'runtime_buckets_hour_default',
      'runtime_buckets_day_default',
      partitionOf(RUNTIME_ROWS.hour, new Date()).name,
    ])
      expect({ partition, fillfactor: await fillfactorOf(partition as string) }).toEqual({
        partition,
        fillfactor: '70',
      });
    for (const partition of [made[0], 'runtime_buckets_minute_default'])
      expect({ partition, fillfactor: await fillfactorOf(partition as string) }).toEqual({
        partition,
        fillfactor: null,
      });
  });

  it('keeps room to update on the pages of observations, in partitions made before and after', async () => {
    const later = new Date(Date.now() + 35 * 24 * 3600_000);
    const made = partitionOf(OBSERVATIONS, later).name;
    expect(await maker(ds).cover([OBSERVATIONS], later, later)).toEqual([made]);
    // Made now, and this week's, which the migrations made.
    for (const partition of [made, partitionOf(OBSERVATIONS, new Date()).name])
      expect({ partition, fillfactor: await fillfactorOf(partition) }).toEqual({ partition, fillfactor: '80' });
  });
});
