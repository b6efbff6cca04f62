/**
 * What one fold takes of a row's queued batches (issue 20): folds gather many batches
 * (ingest/evidence-folder.ts), so a take is bounded by batches and by the payloads' stored bytes,
 * oldest first, one batch at least, and says whether a bound left some queued.
 */
import { randomBytes } from 'node:crypto';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { packList } from '../src/evidence/queued-payload';
import { createMigratedDatabase, type MigratedDatabase } from './support';

let db: MigratedDatabase;
let repository: EvidenceRepository;
let projectId: string;
let rowId: string;

beforeAll(async () => {
  db = await createMigratedDatabase();
  repository = new EvidenceRepository(db.ds);
  [{ id: projectId }] = (await db.ds.query(`INSERT INTO projects (slug, name) VALUES ('q', 'Q') RETURNING id`)) as [
    { id: string },
  ];
  [{ id: rowId }] = (await db.ds.query(
    `INSERT INTO environment_rows (project_id, kind, name, scope, first_seen, last_seen)
     VALUES ($1, 'production', 'b1', 'production', now(), now()) RETURNING id`,
    [projectId],
  )) as [{ id: string }];
});
afterAll(() => db?.close());

/** Queues `n` batches for the row, each with `rows` exchanges of distinct paths (so they do not compress to nothing). */
async function queue(n: number, rows: number): Promise<void> {
  for (let b = 0; b < n; b++) {
    const exchanges = Array.from({ length: rows }, (_, i) => ({
      method: 'GET',
      path: `/batch-${b}/item-${i}-${(b * 7919 + i * 104729).toString(36)}`,
      status: 200,
      req_ct: null,
      req_fp: null,
      res_ct: null,
      res_fp: null,
      count: i + 1,
      last_seen: new Date(Date.UTC(2026, 10, 29, 0, b, i % 60)).toISOString(),
      query: null,
      req_h: null,
    }));
    await db.ds.query(
      `INSERT INTO evidence_queue (project_id, row_id, build, commit, last_seen, packed_exchanges, packed_minutes, packed_consumers)
       VALUES ($1, $2, 'b1', NULL, now(), $3, '[]', '[]')`,
      [projectId, rowId, packList(exchanges)],
    );
  }
}

const take = (limit: number, bytes: number) =>
  db.ds.transaction((manager) => repository.takeQueued(manager, projectId, rowId, limit, bytes));

it('takes the oldest batches up to a bound of bytes, one at least, and says what it left', async () => {
  await queue(6, 200);
  const [{ size }] = (await db.ds.query(
    `SELECT max(pg_column_size(packed_exchanges) + pg_column_size(packed_minutes) + pg_column_size(packed_consumers))::int AS size
       FROM evidence_queue`,
  )) as [{ size: number }];
  expect(size).toBeGreaterThan(1000);

  // Room for two and a half batches: the third starts below the bound, so it is taken too.
  const first = await take(500, Math.floor(2.5 * size));
  expect(first.batches.map((batch) => batch.exchanges[0]?.path.split('/')[1])).toEqual([
    'batch-0',
    'batch-1',
    'batch-2',
  ]);
  expect(first.left).toBe(true);
  // A bound below one batch still takes one.
  const second = await take(500, 1);
  expect(second.batches.map((batch) => batch.exchanges[0]?.path.split('/')[1])).toEqual(['batch-3']);
  expect(second.left).toBe(true);
  // The limit of batches bounds as before.
  const third = await take(1, 100 * size);
  expect(third.batches).toHaveLength(1);
  expect(third.left).toBe(true);
  const last = await take(500, 100 * size);
  expect(last.batches.map((batch) => batch.exchanges[0]?.path.split('/')[1])).toEqual(['batch-5']);
  expect(last.left).toBe(false);
  expect(await take(500, 100 * size)).toEqual({ batches: [], left: false });
});

it('keeps a batch’s lists compressed in its queue row, out of line only when the row would not fit a page', async () => {
  await queue(1, 200); // ~37 KB of JSON text: past the 2 KB at which values go out of line by default
  // 24 KB that do not compress (random hexadecimal digits as path names)
  const random = Array.from({ length: 600 }, () => ({ method: 'GET', path: `/${randomBytes(20).toString('hex')}` }));
  await db.ds.query(
    `INSERT INTO evidence_queue (project_id, row_id, build, commit, last_seen, packed_exchanges, packed_minutes, packed_consumers)
     VALUES ($1, $2, 'b1', NULL, now(), '[]', '[]', $3)`,
    [projectId, rowId, packList(random)],
  );
  const stored = (await db.ds.query(
    `SELECT pg_column_compression(packed_exchanges) AS exchanges, pg_column_toast_chunk_id(packed_exchanges) IS NULL AS inline,
            pg_column_toast_chunk_id(packed_consumers) IS NULL AS "consumersInline"
       FROM evidence_queue WHERE row_id = $1 ORDER BY id`,
    [rowId],
  )) as Array<{ exchanges: string | null; inline: boolean; consumersInline: boolean }>;
  expect(stored).toEqual([
    { exchanges: 'pglz', inline: true, consumersInline: true },
    { exchanges: null, inline: true, consumersInline: false },
  ]);
  const { batches } = await take(500, 100 * 1024 * 1024);
  expect(batches.map((batch) => batch.exchanges.length)).toEqual([200, 0]);
  expect(batches[1]?.consumers).toEqual(random);
});
