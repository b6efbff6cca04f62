import { LOCK_ROWS } from '../src/consumers/consumers.repository';
import { FOLD_TABLES, FoldStatistics } from '../src/ingest/fold-statistics';
import { createMigratedDatabase, type MigratedDatabase } from './support';

// Issue 20: before a fold table has statistics (a new deployment's first minute, before autovacuum
// comes by), PostgreSQL guessed every condition alike and consumers' LOCK_ROWS read each key of a
// fold through `consumer_calls_kind_day_idx` (project, kind skipped, day), filtering the project's
// whole day for every key. The folder now analyses a fold table once it holds rows (FoldStatistics).
let db: MigratedDatabase;

beforeAll(async () => {
  db = await createMigratedDatabase();
});
afterAll(async () => {
  await db.close();
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

const indexes = (node: PlanNode): string[] => [
  ...(node['Index Name'] === undefined ? [] : [node['Index Name']]),
  ...(node.Plans ?? []).flatMap(indexes),
];

it("finds a fold's consumer rows by their primary key once the table holds rows, with a few buffers a key", async () => {
  const [{ id: project }] = (await db.ds.query(
    `INSERT INTO projects (slug, name) VALUES ('plan', 'Plan') RETURNING id`,
  )) as [{ id: string }];
  const [{ id: row }] = (await db.ds.query(
    `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
     VALUES ($1, 'production', 'build-1', '', 'build-1', now(), now()) RETURNING id`,
    [project],
  )) as [{ id: string }];
  // A fold's 600 keys (300 endpoints, two statuses, one day), half of them stored: the scale bench's first folds.
  const keys = Array.from({ length: 600 }, (_, n) => ({ path: `/r${n >> 1}`, status: n % 2 === 0 ? 201 : 400 }));
  const columns = (of: typeof keys): unknown[] => [
    of.map(() => 'POST'),
    of.map((k) => k.path),
    of.map((k) => k.status),
    of.map(() => '2026-11-29'),
  ];
  await db.ds.query(
    `INSERT INTO consumer_calls (project_id, row_id, method, path, status, day, environment_kind, consumers)
     SELECT $1, $2, m, p, s, d, 'production', '{"a": [1, 1]}'::jsonb
       FROM unnest($3::text[], $4::text[], $5::int[], $6::date[]) AS u(m, p, s, d)`,
    [project, row, ...columns(keys.filter((_, n) => n % 2 === 0))],
  );
  const statistics = new FoldStatistics(db.ds);
  await statistics.afterFold();

  const [{ 'QUERY PLAN': plan }] = (await db.ds.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${LOCK_ROWS}`, [
    project,
    row,
    ...columns(keys),
  ])) as [{ 'QUERY PLAN': [{ Plan: PlanNode }] }];
  const top = plan[0].Plan;
  expect(indexes(top)).toEqual(['consumer_calls_pkey']);
  // By the primary key: its descent (2–3 buffers) per key and the heap page of each row found.
  // Through kind_day: ~10 a key (5,700 here), growing with the rows of the project's day.
  const buffers = (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0);
  expect(buffers).toBeLessThanOrEqual(4 * keys.length);

  // Every fold table that holds rows has statistics now; the empty ones are left to a later fold.
  const missing = (await db.ds.query(
    `SELECT relname AS name, pg_relation_size(oid) > 0 AS "holdsRows" FROM pg_class
      WHERE oid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest($1::text[]) AS t)) AND reltuples < 0`,
    [FOLD_TABLES],
  )) as Array<{ name: string; holdsRows: boolean }>;
  expect(missing.filter(({ holdsRows }) => holdsRows)).toEqual([]);
  expect(missing.map(({ name }) => name)).not.toContain('consumer_calls');
});
