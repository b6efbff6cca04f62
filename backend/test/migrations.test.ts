import { createDataSource, MIGRATIONS } from '../src/database/data-source';
import { appliedMigrations, migrateDown, migrateUp } from '../src/database/migrate';
import { EvidenceRepository, originsDifferingFromEvidence } from '../src/evidence/evidence.repository';
import { createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

async function tables(ds: ReturnType<typeof createDataSource>): Promise<string[]> {
  const rows = (await ds.query(
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  )) as Array<{ tablename: string }>;
  return rows.map((row) => row.tablename);
}

describe('migrations', () => {
  it('go up, down to nothing, and up again to the same schema', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      expect(await migrateUp(ds)).toEqual(MIGRATIONS.map((m) => m.name));
      const schema = await tables(ds);
      expect(schema).toEqual(
        expect.arrayContaining([
          'projects',
          'tokens',
          'agents',
          'captures',
          'shapes',
          'observations',
          'processed_batches',
          'endpoints',
          'endpoint_versions',
          'proposals',
          'proposal_steps',
        ]),
      );
      expect(await migrateUp(ds)).toEqual([]);
      for (let i = 0; i < MIGRATIONS.length; i++) expect(await migrateDown(ds)).not.toBeNull();
      expect(await migrateDown(ds)).toBeNull();
      expect(await tables(ds)).toEqual(['migrations']);
      expect(await appliedMigrations(ds)).toEqual([]);
      await migrateUp(ds);
      expect(await tables(ds)).toEqual(schema);
    } finally {
      await ds.destroy();
    }
  });

  it('enforce the constraints the code relies on', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      const fails = async (sql: string, params: unknown[], constraint: RegExp): Promise<void> => {
        await expect(ds.query(sql, params)).rejects.toThrow(constraint);
      };
      const [project] = (await ds.query(`INSERT INTO projects (slug, name) VALUES ('c', 'C') RETURNING id`)) as Array<{
        id: string;
      }>;
      await fails(`INSERT INTO projects (slug, name) VALUES ('c', 'again')`, [], /projects_slug_unique/);
      await fails(`INSERT INTO projects (slug, name) VALUES ('Bad Slug', 'x')`, [], /projects_slug_format/);
      await fails(
        `INSERT INTO tokens (name, scope, token_hash) VALUES ('t', 'read', 'h1')`,
        [],
        /tokens_project_unless_admin/,
      );
      await fails(
        `INSERT INTO tokens (project_id, name, scope, token_hash) VALUES ($1, 't', 'root', 'h2')`,
        [project?.id],
        /tokens_scope_known/,
      );
      await fails(
        `INSERT INTO tokens (project_id, name, scope, environments, token_hash) VALUES ($1, 't', 'agent', '{moon}', 'h3')`,
        [project?.id],
        /tokens_environments_known/,
      );
      const capture = '7d3f5b2a-1c4e-4a6b-8d9f-0e1a2b3c4d5e';
      await ds.query(
        `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at) VALUES ($1, $2, 'ci', 'PR #1', 'agent-start', now())`,
        [capture, project?.id],
      );
      const observation = `INSERT INTO observations (project_id, capture_id, capture_created_at, method, path, status, request_content_type, request_shape, count, first_seen, last_seen)
                           SELECT $1, $2, created_at, 'GET', '/a', $3, $4, $5, 1, now(), now() FROM captures WHERE id = $2`;
      await ds.query(observation, [project?.id, capture, 200, null, null]);
      // NULL (no body) takes part in the aggregate key: a second "no body" row is the same row.
      await fails(observation, [project?.id, capture, 200, null, null], /observations_.*aggregate_key|duplicate key/);
      await fails(observation, [project?.id, capture, 700, null, null], /observations_status_range/);
      // Observations have no foreign keys (issue 20): the batch statement writes only rows of its
      // capture, of the capture's project, naming stored shapes, and shapes are never deleted
      // (ingest-foreign-keys.test holds the rest).
      await fails('DELETE FROM shapes', [], /shapes are never deleted/);
      await ds.query(`INSERT INTO endpoints (project_id, method, path) VALUES ($1, 'GET', '/a')`, [project?.id]);
      await fails(
        `INSERT INTO endpoints (project_id, method, path) VALUES ($1, 'GET', '/a')`,
        [project?.id],
        /endpoints_method_path_unique/,
      );
    } finally {
      await ds.destroy();
    }
  });

  it('move consumer calls counted per kind to the newest row of their kind, and back', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      // Back to before the calls were kept per build.
      while ((await appliedMigrations(ds)).includes('ConsumerCallsPerBuild1765987000000')) await migrateDown(ds);
      const [project] = (await ds.query(
        `INSERT INTO projects (slug, name) VALUES ('per-build', 'P') RETURNING id`,
      )) as [{ id: string }];
      const row = async (name: string, lastSeen: string): Promise<string> =>
        (
          (await ds.query(
            `INSERT INTO environment_rows (project_id, kind, name, scope, first_seen, last_seen)
             VALUES ($1, 'production', $2, '', $3, $3) RETURNING id`,
            [project.id, name, lastSeen],
          )) as [{ id: string }]
        )[0].id;
      await row('b1', '2026-11-01T00:00:00Z');
      const newest = await row('b2', '2026-11-20T00:00:00Z');
      const calls = async (kind: string, consumer: string, n: number): Promise<void> =>
        void (await ds.query(
          `INSERT INTO consumer_calls (project_id, environment_kind, method, path, status, consumer, day, calls, last_call)
           VALUES ($1, $2, 'GET', '/users', 200, $3, '2026-11-20', $4, '2026-11-20T10:00:00Z')`,
          [project.id, kind, consumer, n],
        ));
      await calls('production', '*', 5);
      await calls('production', '0123456789abcdef', 3);
      // Staging has no row of this project: no build to show its calls under.
      await calls('staging', '*', 2);
      await migrateUp(ds);
      const stored = `SELECT environment_kind AS kind, consumer, calls::int AS calls FROM consumer_calls
                       WHERE project_id = $1 ORDER BY kind, consumer`;
      // Since ConsumerCallsPerKey: a row per endpoint, status and day, with every consumer's calls.
      const storedPerKey = `SELECT c.environment_kind AS kind, e.key AS consumer, (e.value->>0)::int AS calls
                              FROM consumer_calls c CROSS JOIN LATERAL jsonb_each(c.consumers) e
                             WHERE c.project_id = $1 ORDER BY kind, consumer`;
      expect(
        await ds.query(`SELECT DISTINCT row_id AS "rowId" FROM consumer_calls WHERE project_id = $1`, [project.id]),
      ).toEqual([{ rowId: newest }]);
      expect(await ds.query(storedPerKey, [project.id])).toEqual([
        { kind: 'production', consumer: '*', calls: 5 },
        { kind: 'production', consumer: '0123456789abcdef', calls: 3 },
      ]);
      // Per build again after a second call of another build; down adds the builds up per kind.
      await ds.query(
        `INSERT INTO consumer_calls (project_id, row_id, environment_kind, method, path, status, day, consumers)
         SELECT $1, id, 'production', 'GET', '/users', 200, '2026-11-20', $2::jsonb
           FROM environment_rows WHERE project_id = $1 AND name = 'b1'`,
        [project.id, JSON.stringify({ '*': [4, Date.parse('2026-11-20T11:00:00Z')] })],
      );
      while ((await appliedMigrations(ds)).includes('ConsumerCallsPerBuild1765987000000')) await migrateDown(ds);
      expect(await ds.query(stored, [project.id])).toEqual([
        { kind: 'production', consumer: '*', calls: 9 },
        { kind: 'production', consumer: '0123456789abcdef', calls: 3 },
      ]);
      await migrateUp(ds);
    } finally {
      await ds.destroy();
    }
  });

  it('keep consumer calls in one row per build, endpoint, status and day, and back', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      while ((await appliedMigrations(ds)).includes('ConsumerCallsPerKey1795901374861')) await migrateDown(ds);
      const [project] = (await ds.query(`INSERT INTO projects (slug, name) VALUES ('per-key', 'P') RETURNING id`)) as [
        { id: string },
      ];
      const [row] = (await ds.query(
        `INSERT INTO environment_rows (project_id, kind, name, scope, first_seen, last_seen)
         VALUES ($1, 'staging', 's1', '', now(), now()) RETURNING id`,
        [project.id],
      )) as [{ id: string }];
      const perConsumer = [
        ['/users', 200, '*', '2026-11-20', 9, '2026-11-20T10:00:00.123456Z'],
        ['/users', 200, '0123456789abcdef', '2026-11-20', 5, '2026-11-20T09:00:00.5Z'],
        ['/users', 200, 'fedcba9876543210', '2026-11-20', 3, '2026-11-20T10:00:00.123Z'],
        ['/users', 200, '+', '2026-11-20', 1, '2026-11-20T08:00:00Z'],
        ['/users', 404, '*', '2026-11-20', 2, '2026-11-20T07:00:00Z'],
        ['/users', 200, '*', '2026-11-21', 4, '2026-11-21T01:00:00Z'],
        ['/orders', 200, '0123456789abcdef', '2026-11-21', 6, '2026-11-21T02:00:00Z'],
      ] as const;
      for (const [path, status, consumer, day, calls, lastCall] of perConsumer)
        await ds.query(
          `INSERT INTO consumer_calls (project_id, row_id, environment_kind, method, path, status, consumer, day, calls, last_call)
           VALUES ($1, $2, 'staging', 'GET', $3, $4, $5, $6, $7, $8)`,
          [project.id, row.id, path, status, consumer, day, calls, lastCall],
        );
      const stored = `SELECT path, status, consumer, to_char(day, 'YYYY-MM-DD') AS day, calls::int AS calls,
                             to_char(last_call AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS "lastCall"
                        FROM consumer_calls WHERE project_id = $1 ORDER BY path, status, day, consumer`;
      const before = await ds.query(stored, [project.id]);
      expect(before).toHaveLength(perConsumer.length);
      await migrateUp(ds);
      // One row per key; every consumer's calls and last call (to the millisecond) in it.
      expect(
        await ds.query(
          `SELECT path, status, to_char(day, 'YYYY-MM-DD') AS day, consumers FROM consumer_calls
            WHERE project_id = $1 ORDER BY path, status, day`,
          [project.id],
        ),
      ).toEqual([
        {
          path: '/orders',
          status: 200,
          day: '2026-11-21',
          consumers: { '0123456789abcdef': [6, Date.parse('2026-11-21T02:00:00Z')] },
        },
        {
          path: '/users',
          status: 200,
          day: '2026-11-20',
          consumers: {
            '*': [9, Date.parse('2026-11-20T10:00:00.123Z')],
            '+': [1, Date.parse('2026-11-20T08:00:00Z')],
            '0123456789abcdef': [5, Date.parse('2026-11-20T09:00:00.5Z')],
            fedcba9876543210: [3, Date.parse('2026-11-20T10:00:00.123Z')],
          },
        },
        { path: '/users', status: 200, day: '2026-11-21', consumers: { '*': [4, Date.parse('2026-11-21T01:00:00Z')] } },
        { path: '/users', status: 404, day: '2026-11-20', consumers: { '*': [2, Date.parse('2026-11-20T07:00:00Z')] } },
      ]);
      // Down: a row per consumer again, as before (the last call to the millisecond).
      while ((await appliedMigrations(ds)).includes('ConsumerCallsPerKey1795901374861')) await migrateDown(ds);
      expect(await ds.query(stored, [project.id])).toEqual(before);
      await migrateUp(ds);
    } finally {
      await ds.destroy();
    }
  });

  it('give observations their capture’s project and key captures by project, on stored rows, and back', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      const first = 'CapturesAndObservationsByProject1795883455939';
      while ((await appliedMigrations(ds)).includes(first)) await migrateDown(ds);
      // Two projects, captures in two weeks, rows as the schema kept them before (no project_id).
      const seeded: Array<{ project: string; capture: string; createdAt: string }> = [];
      for (const [slug, createdAt] of [
        ['keyed-a', '2026-10-05T12:00:00Z'],
        ['keyed-a', '2026-11-20T08:00:00Z'],
        ['keyed-b', '2026-11-20T09:00:00Z'],
      ] as const) {
        const [project] = (await ds.query(
          `INSERT INTO projects (slug, name) VALUES ($1, $1) ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name RETURNING id`,
          [slug],
        )) as [{ id: string }];
        const [capture] = (await ds.query(
          `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at, created_at)
           VALUES (gen_random_uuid(), $1, 'local', 'local', 'agent-start', $2, $2) RETURNING id`,
          [project.id, createdAt],
        )) as [{ id: string }];
        seeded.push({ project: project.id, capture: capture.id, createdAt });
        await ds.query(
          `INSERT INTO observations (capture_id, method, path, status, request_content_type, count, first_seen, last_seen)
           SELECT $1, 'GET', '/p' || i, 200, CASE WHEN i % 2 = 0 THEN 'application/json' END, i, $2, $2 FROM generate_series(1, 3) i`,
          [capture.id, createdAt],
        );
      }
      const rows = `SELECT c.project_id AS project, o.capture_id AS capture, o.path, o.request_content_type AS ct, o.count::int AS count
                      FROM observations o JOIN captures c ON c.id = o.capture_id
                     WHERE c.project_id IN (SELECT id FROM projects WHERE slug LIKE 'keyed-%') ORDER BY o.capture_id, o.path`;
      const before = (await ds.query(rows)) as unknown[];
      expect(before).toHaveLength(9);
      await migrateUp(ds);
      expect(await ds.query(rows)).toEqual(before);
      expect(
        await ds.query(
          `SELECT count(*)::int AS n FROM observations o JOIN captures c ON c.id = o.capture_id WHERE o.project_id <> c.project_id`,
        ),
      ).toEqual([{ n: 0 }]);
      // Each row in the partition of its capture's creation week (Monday, UTC).
      expect(
        await ds.query(
          `SELECT DISTINCT o.tableoid::regclass::text AS partition, o.capture_created_at = c.created_at AS keyed
             FROM observations o JOIN captures c ON c.id = o.capture_id
            WHERE c.project_id IN (SELECT id FROM projects WHERE slug LIKE 'keyed-%') ORDER BY 1`,
        ),
      ).toEqual([
        { partition: 'observations_20261005', keyed: true },
        { partition: 'observations_20261116', keyed: true },
      ]);
      while ((await appliedMigrations(ds)).includes(first)) await migrateDown(ds);
      expect(await ds.query(rows)).toEqual(before);
      await migrateUp(ds);
    } finally {
      await ds.destroy();
    }
  });

  it('pack queued batches’ lists as tables, fold them after, and unpack them back', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      const change = 'PackedEvidenceQueue1795921658378';
      while ((await appliedMigrations(ds)).includes(change)) await migrateDown(ds);
      const [project] = (await ds.query(
        `INSERT INTO projects (slug, name) VALUES ('queue-kept', 'Q') RETURNING id`,
      )) as [{ id: string }];
      const [row] = (await ds.query(
        `INSERT INTO environment_rows (project_id, kind, name, scope, first_seen, last_seen)
         VALUES ($1, 'production', 'b1', '', now(), now()) RETURNING id`,
        [project.id],
      )) as [{ id: string }];
      // Batches queued by the version before: objects, nulls, names needing escapes, an empty list.
      const exchange = {
        method: 'GET',
        path: '/users/{id}',
        status: 200,
        req_ct: null,
        req_fp: null,
        res_ct: 'application/json',
        res_fp: 'f1',
        count: 3,
        last_seen: '2026-11-29T01:00:00.123Z',
        query: ['a "b"', 'c\\d'],
        req_h: null,
      };
      const minute = {
        method: 'GET',
        path: '/users/{id}',
        minute: '2026-11-29T01:00:00.000Z',
        requests: 3,
        serverErrors: 0,
        upstreamFailures: 0,
        clientLeft: 1,
        ttfb: { '07': 2, '12': 1 },
        ttlb: {},
      };
      const consumer = {
        method: 'GET',
        path: '/users/{id}',
        status: 200,
        consumer: '*',
        day: '2026-11-29',
        calls: 3,
        lastCall: '2026-11-29T01:00:00.123Z',
      };
      const batches = [
        {
          exchanges: [exchange, { ...exchange, path: '/x', status: 404, query: null }],
          minutes: [minute],
          consumers: [consumer],
        },
        { exchanges: [], minutes: [{ ...minute, path: '/gone' }], consumers: [] },
      ];
      for (const batch of batches)
        await ds.query(
          `INSERT INTO evidence_queue (project_id, row_id, build, last_seen, exchanges, minutes, consumers)
           VALUES ($1, $2, 'b1', now(), $3::json, $4::json, $5::json)`,
          [
            project.id,
            row.id,
            JSON.stringify(batch.exchanges),
            JSON.stringify(batch.minutes),
            JSON.stringify(batch.consumers),
          ],
        );
      const old = `SELECT exchanges, minutes, consumers FROM evidence_queue WHERE project_id = $1 ORDER BY id`;
      expect(await ds.query(old, [project.id])).toEqual(batches);
      await migrateUp(ds);
      // Packed: the field names once, method and path first.
      const [first] = (await ds.query(
        `SELECT packed_exchanges AS exchanges FROM evidence_queue WHERE project_id = $1 ORDER BY id LIMIT 1`,
        [project.id],
      )) as [{ exchanges: string }];
      const table = JSON.parse(first.exchanges) as unknown[][];
      expect(table[0]?.slice(0, 2)).toEqual(['method', 'path']);
      expect(table[1]?.slice(0, 3)).toEqual(['GET', '/users/{id}', 200]);
      // Down: the objects as they were.
      while ((await appliedMigrations(ds)).includes(change)) await migrateDown(ds);
      expect(await ds.query(old, [project.id])).toEqual(batches);
      // Up again, and the fold's reader takes them as they were queued.
      await migrateUp(ds);
      const { batches: taken } = await new EvidenceRepository(ds).takeQueued(ds, project.id, row.id, 10, 1 << 20);
      expect(taken.map(({ exchanges, minutes, consumers }) => ({ exchanges, minutes, consumers }))).toEqual(batches);
      expect(await ds.query('SELECT id FROM evidence_queue WHERE project_id = $1', [project.id])).toEqual([]);
    } finally {
      await ds.destroy();
    }
  });

  it('read exchange origins from the evidence of every row once the table is gone, and make it again', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      const change = 'OriginsReadFromEvidence1795902502424';
      while ((await appliedMigrations(ds)).includes(change)) await migrateDown(ds);
      const [project] = (await ds.query(
        `INSERT INTO projects (slug, name) VALUES ('origins-kept', 'O') RETURNING id`,
      )) as [{ id: string }];
      // Two pull requests' rows with the same exchange: the later row saw it first (microseconds apart).
      const row = async (name: string, firstSeen: string): Promise<string> =>
        (
          (await ds.query(
            `INSERT INTO environment_rows (project_id, kind, name, scope, pull_request, first_seen, last_seen)
             VALUES ($1, 'ci', $2, $2, $2, $3, $3) RETURNING id`,
            [project.id, name, firstSeen],
          )) as [{ id: string }]
        )[0].id;
      const early = await row('1', '2026-11-20T10:00:00.000001Z');
      const late = await row('2', '2026-11-20T10:00:00.000002Z');
      for (const [id, seen, commit] of [
        [early, '2026-11-21T10:00:00.000009Z', 'c1'],
        [late, '2026-11-21T10:00:00.000003Z', 'c2'],
      ] as const)
        await ds.query(
          `INSERT INTO evidence_observations (row_id, project_id, method, path, status, count, first_seen, last_seen, first_commit)
           VALUES ($1, $2, 'GET', '/users', 200, 1, $3, $3, $4)`,
          [id, project.id, seen, commit],
        );
      await ds.query(
        `INSERT INTO exchange_origins (project_id, kind, method, path, status, row_id, row_first_seen, first_seen, commit)
         SELECT project_id, 'ci', method, path, status, row_id, '2026-11-20T10:00:00.000002Z', first_seen, first_commit
           FROM evidence_observations WHERE row_id = $1`,
        [late],
      );
      await migrateUp(ds);
      expect(
        await ds.query(
          `SELECT count(*)::int AS n FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id
            WHERE (o.kind, o.row_first_seen) IS DISTINCT FROM (r.kind, r.first_seen) AND r.project_id = $1`,
          [project.id],
        ),
      ).toEqual([{ n: 0 }]);
      expect(await originsDifferingFromEvidence(ds, project.id)).toEqual({ stored: 1, differing: 0 });
      while ((await appliedMigrations(ds)).includes(change)) await migrateDown(ds);
      expect(
        await ds.query(
          `SELECT row_id AS "rowId", first_seen::text AS "firstSeen", commit FROM exchange_origins WHERE project_id = $1`,
          [project.id],
        ),
      ).toEqual([{ rowId: late, firstSeen: '2026-11-21 10:00:00.000003+00', commit: 'c2' }]);
      await migrateUp(ds);
    } finally {
      await ds.destroy();
    }
  });

  it('roll the minutes waiting as fold rows up into their hours and days, and waiting rows back into their rows', async () => {
    const ds = createDataSource(database.url, { poolSize: 2 });
    await ds.initialize();
    try {
      await migrateUp(ds);
      const change = 'RuntimeMinutesWaitPerEndpoint1795931360487';
      while ((await appliedMigrations(ds)).includes(change)) await migrateDown(ds);
      const [project] = (await ds.query(
        `INSERT INTO projects (slug, name) VALUES ('minutes-waiting', 'W') RETURNING id`,
      )) as [{ id: string }];
      const rowsOf = async () =>
        (await ds.query(
          `SELECT resolution, bucket::text, requests::int, ttfb FROM runtime_buckets WHERE project_id = $1
            ORDER BY resolution, bucket`,
          [project.id],
        )) as unknown[];
      const row = (resolution: string, bucket: string, requests: number, ttfb: Record<string, number>) => ({
        resolution,
        bucket,
        requests,
        ttfb,
      });
      const minute = (at: string, requests: number, ttfb: Record<string, number>) => ({
        method: 'GET',
        path: '/w',
        version: '1.0',
        minute: at,
        requests,
        server_errors: 0,
        upstream_failures: 0,
        client_left: 0,
        ttfb,
        ttlb: ttfb,
      });
      // The layout before: a fold wrote its minute rows and one row of its minutes for the roll-up; an hour stored.
      await ds.query(
        `INSERT INTO runtime_buckets (project_id, method, path, environment_kind, environment_name, version, resolution,
                                      bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         VALUES ($1, 'GET', '/w', 'production', 'p-1', '1.0', 'hour', '2026-11-29 05:00+00', 5, 0, 0, 0,
                 '{"10": 5}', '{"10": 5}')`,
        [project.id],
      );
      await ds.query(
        `INSERT INTO runtime_minutes_added (project_id, environment_kind, environment_name, minutes)
         VALUES ($1, 'production', 'p-1', $2::jsonb)`,
        [
          project.id,
          JSON.stringify([
            minute('2026-11-29T05:01:00Z', 2, { '10': 1, '11': 1 }),
            minute('2026-11-29T06:02:00Z', 3, { '12': 3 }),
          ]),
        ],
      );
      await migrateUp(ds);
      expect(await rowsOf()).toEqual([
        row('day', '2026-11-29 00:00:00+00', 5, { '10': 1, '11': 1, '12': 3 }),
        row('hour', '2026-11-29 05:00:00+00', 7, { '10': 6, '11': 1 }),
        row('hour', '2026-11-29 06:00:00+00', 3, { '12': 3 }),
      ]);
      expect(await ds.query('SELECT count(*)::int AS n FROM runtime_minutes_added')).toEqual([{ n: 0 }]);

      // A minute waiting in the new layout goes to its minute, hour and day rows going down.
      await ds.query(
        `INSERT INTO runtime_minutes_added (project_id, environment_kind, environment_name, method, path, version, minute,
                                            requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         VALUES ($1, 'production', 'p-1', 'GET', '/w', '1.0', '2026-11-29 06:02+00', 4, 0, 0, 0, '{"12": 4}', '{"12": 4}')`,
        [project.id],
      );
      while ((await appliedMigrations(ds)).includes(change)) await migrateDown(ds);
      expect(await rowsOf()).toEqual([
        row('day', '2026-11-29 00:00:00+00', 9, { '10': 1, '11': 1, '12': 7 }),
        row('hour', '2026-11-29 05:00:00+00', 7, { '10': 6, '11': 1 }),
        row('hour', '2026-11-29 06:00:00+00', 7, { '12': 7 }),
        row('minute', '2026-11-29 06:02:00+00', 4, { '12': 4 }),
      ]);
      expect(await ds.query('SELECT minutes FROM runtime_minutes_added')).toEqual([]);
      await migrateUp(ds);
    } finally {
      await ds.destroy();
    }
  });
});
