/**
 * Consumer calls waiting for their row's compaction (issue 20, session 32): a fold inserts the
 * calls of the consumers it counted, one row per key, and reads add them to the keys' rows, so
 * every answer is the same before and after a compaction merges them; the compaction applies the
 * bound of named consumers a key keeps; a regrouping moves them; the prune drops them by day and
 * with their project.
 */
import {
  ALL_CALLS,
  CONSUMER_CALLS,
  type ConsumerRow,
  ConsumersRepository,
  MAX_CONSUMERS_PER_KEY,
  OTHER_CONSUMERS,
  type StoredCalls,
} from '../src/consumers/consumers.repository';
import { createMigratedDatabase, type MigratedDatabase } from './support';

let db: MigratedDatabase;
let repository: ConsumersRepository;
let projectId: string;
const row = { id: '', kind: 'production' as const };
const DAY = '2026-11-30';
const AT = Date.parse('2026-11-30T12:00:00.000Z');
const pseudonym = (n: number): string => n.toString(16).padStart(16, '0');

beforeAll(async () => {
  db = await createMigratedDatabase();
  repository = new ConsumersRepository(db.ds);
  [{ id: projectId }] = (await db.ds.query(
    `INSERT INTO projects (slug, name) VALUES ('calls', 'Calls') RETURNING id`,
  )) as [{ id: string }];
  [{ id: row.id }] = (await db.ds.query(
    `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
     VALUES ($1, 'production', 'build-1', '', 'build-1', now(), now()) RETURNING id`,
    [projectId],
  )) as [{ id: string }];
});
afterAll(async () => {
  await db.close();
});

/** A fold's row of one key: `calls` per consumer, each call at AT plus its index in ms. */
const fold = (path: string, calls: Record<string, number>): ConsumerRow => ({
  method: 'GET',
  path,
  status: 200,
  day: DAY,
  consumers: new Map(Object.entries(calls).map(([c, n], i): [string, StoredCalls] => [c, [n, AT + i]])),
});

/** A fold of `rows` in a transaction that holds the environment row, as folds run. */
const folded = (rows: readonly ConsumerRow[], compact: boolean): Promise<void> =>
  db.ds.transaction(async (manager) => {
    await manager.query('SELECT 1 FROM environment_rows WHERE id = $1 FOR NO KEY UPDATE', [row.id]);
    await repository.addRows(manager, projectId, row, rows, compact);
  });

const count = async (table: string): Promise<number> =>
  ((await db.ds.query(`SELECT count(*)::int AS n FROM ${table}`)) as [{ n: number }])[0].n;

/** Every read's answer for the project's production calls (the window from DAY). */
const reads = async (): Promise<unknown[]> => [
  await repository.consumersOf(projectId, 'production', DAY, null),
  await repository.consumersOf(projectId, 'production', DAY, row.id),
  await repository.buildsOf(projectId, 'production', DAY, 10),
  await repository.endpointCalls(projectId, { method: 'GET', path: '/a' }, null, DAY, row.id),
  await repository.partCalls(projectId, [{ method: 'GET', path: '/b', status: null }], 'production', DAY, null),
];

it('are answered by every read before and after the compaction, which merges them into one row a key', async () => {
  // The row's first fold compacts (nothing waits yet); the next ones only insert.
  await folded([fold('/a', { [ALL_CALLS]: 3, [pseudonym(1)]: 3 })], true);
  await folded([fold('/a', { [ALL_CALLS]: 2, [pseudonym(1)]: 1, [pseudonym(2)]: 1 })], false);
  await folded([fold('/a', { [ALL_CALLS]: 4, [OTHER_CONSUMERS]: 4 }), fold('/b', { [ALL_CALLS]: 5 })], false);
  expect([await count('consumer_calls'), await count('consumer_calls_added')]).toEqual([1, 3]);
  const before = await reads();
  expect(before[0]).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ consumer: ALL_CALLS, calls: '14', endpoints: 2 }),
      expect.objectContaining({ consumer: pseudonym(1), calls: '4', endpoints: 1 }),
      expect.objectContaining({ consumer: pseudonym(2), calls: '1', endpoints: 1 }),
      expect.objectContaining({ consumer: OTHER_CONSUMERS, calls: '4', endpoints: 1 }),
    ]),
  );

  await db.ds.transaction((manager) => repository.compact(manager, projectId, row));
  expect([await count('consumer_calls'), await count('consumer_calls_added')]).toEqual([2, 0]);
  expect(await reads()).toEqual(before);
  const [stored] = (await db.ds.query(`SELECT consumers FROM consumer_calls WHERE path = '/a'`)) as [
    { consumers: Record<string, StoredCalls> },
  ];
  expect(stored.consumers).toEqual({
    [ALL_CALLS]: [9, AT],
    [pseudonym(1)]: [4, AT + 1],
    [pseudonym(2)]: [1, AT + 2],
    [OTHER_CONSUMERS]: [4, AT + 1],
  });
});

it('keep at most the bound of named consumers a key once compacted, the calls of the others under OTHER_CONSUMERS', async () => {
  const many = (from: number, n: number): Record<string, number> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [pseudonym(1_000 + from + i), 1]));
  await folded([fold('/many', { [ALL_CALLS]: MAX_CONSUMERS_PER_KEY, ...many(0, MAX_CONSUMERS_PER_KEY) })], false);
  await folded([fold('/many', { [ALL_CALLS]: 30, ...many(MAX_CONSUMERS_PER_KEY, 30) })], true);
  const [stored] = (await db.ds.query(
    `SELECT (SELECT count(*)::int FROM jsonb_object_keys(consumers) k WHERE k NOT IN ('*', '+')) AS named,
            (consumers->'*'->>0)::int AS "all", (consumers->'+'->>0)::int AS other
       FROM consumer_calls WHERE path = '/many'`,
  )) as [{ named: number; all: number; other: number }];
  expect(stored).toEqual({ named: MAX_CONSUMERS_PER_KEY, all: MAX_CONSUMERS_PER_KEY + 30, other: 30 });
  expect(await count('consumer_calls_added')).toBe(0);
});

it('move with a regrouping and go with the prune, by day and with their project', async () => {
  await folded([fold('/items/1', { [ALL_CALLS]: 2 }), fold('/items/2', { [ALL_CALLS]: 3 })], false);
  await db.ds.transaction((manager) =>
    repository.regroup(manager, projectId, [row.id], ['/items/1', '/items/2'], '/items/{id}'),
  );
  expect(
    await db.ds.query(
      `SELECT c.path, sum((c.consumers->'*'->>0)::int)::int AS calls FROM ${CONSUMER_CALLS} c
        WHERE c.project_id = $1 AND c.path LIKE '/items%' GROUP BY c.path`,
      [projectId],
    ),
  ).toEqual([{ path: '/items/{id}', calls: 5 }]);

  // A project deleted meanwhile: its waiting rows have no foreign key, the prune drops them.
  const [{ id: gone }] = (await db.ds.query(
    `INSERT INTO projects (slug, name) VALUES ('gone', 'Gone') RETURNING id`,
  )) as [{ id: string }];
  await db.ds.query(
    `INSERT INTO consumer_calls_added (project_id, row_id, environment_kind, method, path, status, day, consumers)
     VALUES ($1, gen_random_uuid(), 'production', 'GET', '/x', 200, '2026-11-30', '{"*": [1, 1]}')`,
    [gone],
  );
  await db.ds.query('DELETE FROM projects WHERE id = $1', [gone]);
  const waiting = await count('consumer_calls_added');
  expect(await repository.prune('2026-11-01')).toBe(1);
  expect(await count('consumer_calls_added')).toBe(waiting - 1);
  // Past the day, the rows of both tables go.
  const stored = await count('consumer_calls');
  expect(await repository.prune('2026-12-01')).toBe(stored + waiting - 1);
  expect([await count('consumer_calls'), await count('consumer_calls_added')]).toEqual([0, 0]);
});
