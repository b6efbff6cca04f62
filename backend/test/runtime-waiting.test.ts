/**
 * Runtime minutes waiting for the roll-up (issue 18): one row per endpoint and minute of a fold,
 * found by endpoint, added by every read; exact whenever the roll-up runs, also while a read runs.
 */
import { LatencyHistogram, type MatrixKind, type WireHistogram } from '@spectator/shared';
import type { EntityManager } from 'typeorm';
import {
  addCounts,
  emptySums,
  type RuntimeMinute,
  RuntimeRepository,
  type RuntimeResolution,
  type RuntimeSums,
} from '../src/runtime/runtime.repository';
import { foldedMinutes } from '../src/runtime/runtime.service';
import { createMigratedDatabase, type MigratedDatabase } from './support';
import { seeded } from './support/seeded';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const RESOLUTIONS: ReadonlyArray<[RuntimeResolution, number]> = [
  ['minute', MINUTE],
  ['hour', HOUR],
  ['day', DAY],
];

const wire = (samples: readonly number[]): WireHistogram => {
  const histogram = new LatencyHistogram();
  for (const ms of samples) histogram.record(ms);
  return histogram.toWire();
};

/** Sums of one step as a read answers them, histograms as bucket counts. */
interface StepSums {
  requests: number;
  serverErrors: number;
  upstreamFailures: number;
  clientLeft: number;
  ttfb: number[];
  ttlb: number[];
}

const countsOf = (histogram: LatencyHistogram): number[] => [...histogram.counts];

// The project's 60 s is a quiet machine's: two of these tests (24 folds, every resolution read
// after each, all of it PostgreSQL's work) ran past it at load ~24 (61.1 s and 60.0 s when cut, at
// the real date; ci30).
jest.setTimeout(180_000);

let db: MigratedDatabase;
beforeAll(async () => {
  // A database of its own: no backend rolls up beside these tests.
  db = await createMigratedDatabase();
});
afterAll(async () => {
  await db?.close();
});

/**
 * What a test checks after fold `fold`: every read against its model, the roll-up (`rollUp`) run
 * beside the reads after every third fold (on another connection: each read sees it before or
 * after, never half), between two reads after the next, not at all after the others.
 * @returns the minutes rolled up beside the reads.
 */
async function readsAfterFold(
  fold: number,
  rollUp: () => Promise<number | null>,
  readAll: () => Promise<unknown>,
  expectedAll: () => unknown,
): Promise<number> {
  if (fold % 3 === 1) {
    const [taken, answers] = await Promise.all([rollUp(), readAll()]);
    expect(answers).toEqual(expectedAll());
    return taken ?? 0;
  }
  expect(await readAll()).toEqual(expectedAll());
  if (fold % 3 === 2) expect(await rollUp()).toBeGreaterThan(0);
  expect(await readAll()).toEqual(expectedAll());
  return 0;
}

/** A fold of 150 endpoints (`/e0`…) of one environment row at two minutes each: `at`'s and the one before, 2 requests each. */
function foldEndpoints(
  repository: RuntimeRepository,
  projectId: string,
  row: { kind: MatrixKind; name: string },
  at: number,
): Promise<void> {
  return db.ds.transaction((manager) =>
    repository.addMinutes(
      manager,
      projectId,
      row,
      Array.from({ length: 300 }, (_, i) => ({
        method: 'GET',
        path: `/e${i % 150}`,
        minute: new Date(at - (i < 150 ? 0 : MINUTE)).toISOString(),
        requests: 2,
        serverErrors: 0,
        upstreamFailures: 0,
        clientLeft: 0,
        ttfb: wire([5, 7]),
        ttlb: wire([6, 8]),
      })),
    ),
  );
}

/**
 * Every plan node that reads runtime_minutes_added in the statements `read` runs (EXPLAIN ANALYZE,
 * each statement answered with no rows): the rows it kept and those it read and dropped.
 */
async function waitingScans(
  read: (explaining: RuntimeRepository) => Promise<unknown>,
): Promise<Array<{ rows: number; dropped: number }>> {
  const plans: Array<[{ Plan: Record<string, unknown> }]> = [];
  await read(
    new RuntimeRepository({
      query: async (sql: string, parameters: unknown[]) => {
        const [{ 'QUERY PLAN': plan }] = (await db.ds.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters)) as [
          { 'QUERY PLAN': [{ Plan: Record<string, unknown> }] },
        ];
        plans.push(plan);
        return [];
      },
    } as unknown as ConstructorParameters<typeof RuntimeRepository>[0]),
  );
  const scans: Array<{ rows: number; dropped: number }> = [];
  const walk = (node: Record<string, unknown>): void => {
    if (node['Relation Name'] === 'runtime_minutes_added')
      scans.push({
        rows: (node['Actual Rows'] as number) * (node['Actual Loops'] as number),
        dropped:
          ((node['Rows Removed by Filter'] as number | undefined) ?? 0) +
          ((node['Rows Removed by Index Recheck'] as number | undefined) ?? 0),
      });
    for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  for (const [{ Plan }] of plans) walk(Plan);
  return scans;
}

describe('runtime minutes waiting for the roll-up', () => {
  it('are answered exactly by every resolution whenever the roll-up runs, also during a read', async () => {
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('waiting', 'Waiting') RETURNING id`,
    )) as [{ id: string }];
    const repository = new RuntimeRepository(db.ds);
    const random = seeded(17);
    const now = Date.UTC(2026, 10, 29, 6, 0);
    const paths = ['/w/{id}', '/other', '/third'];
    const builds = ['s-1', 's-2'];
    // What every fold added, per endpoint, resolution and step: the model the reads must equal.
    const model = new Map<string, RuntimeSums>();
    const add = (m: RuntimeMinute): void => {
      const at = Date.parse(m.minute);
      for (const [resolution, ms] of RESOLUTIONS) {
        const key = `${m.path} ${resolution} ${at - (at % ms)}`;
        let sums = model.get(key);
        if (sums === undefined) model.set(key, (sums = emptySums()));
        sums.requests += m.requests;
        sums.serverErrors += m.serverErrors;
        sums.upstreamFailures += m.upstreamFailures;
        sums.clientLeft += m.clientLeft;
        sums.ttfb.addWire(m.ttfb);
        sums.ttlb.addWire(m.ttlb);
      }
    };
    const expected = (path: string, resolution: RuntimeResolution): Record<string, StepSums> => {
      const steps: Record<string, StepSums> = {};
      for (const [key, sums] of model) {
        const [p, r, at] = key.split(' ');
        if (p === path && r === resolution)
          steps[at as string] = { ...sums, ttfb: countsOf(sums.ttfb), ttlb: countsOf(sums.ttlb) };
      }
      return steps;
    };
    /** What `steps` answers for an endpoint (every build), rows of one step summed. */
    const read = async (path: string, resolution: RuntimeResolution): Promise<Record<string, StepSums>> => {
      const rows = await repository.steps(
        { projectId: project.id, method: 'GET', path, kind: 'staging', name: null, since: new Date(now - 3 * DAY) },
        resolution,
      );
      const steps = new Map<number, RuntimeSums>();
      for (const row of rows) {
        let step = steps.get(row.at);
        if (step === undefined) steps.set(row.at, (step = emptySums()));
        addCounts(step, row);
        step.ttfb.addWireText(row.ttfb);
        step.ttlb.addWireText(row.ttlb);
      }
      return Object.fromEntries(
        [...steps].map(([at, s]) => [String(at), { ...s, ttfb: countsOf(s.ttfb), ttlb: countsOf(s.ttlb) }]),
      );
    };
    const readAll = async () => {
      const answers: Record<string, Record<string, StepSums>> = {};
      for (const path of paths)
        for (const [resolution] of RESOLUTIONS) answers[`${path} ${resolution}`] = await read(path, resolution);
      return answers;
    };
    const expectedAll = () => {
      const answers: Record<string, Record<string, StepSums>> = {};
      for (const path of paths)
        for (const [resolution] of RESOLUTIONS) answers[`${path} ${resolution}`] = expected(path, resolution);
      return answers;
    };
    const waiting = async (): Promise<number> =>
      ((await db.ds.query('SELECT count(*)::int AS n FROM runtime_minutes_added')) as [{ n: number }])[0].n;

    let rolledUpDuringReads = 0;
    for (let fold = 0; fold < 24; fold++) {
      // 12 minutes of the last 2 days (some minutes again, across hours and days), of one build.
      const minutes = foldedMinutes(
        Array.from({ length: 12 }, (): RuntimeMinute => {
          const at = now - Math.floor(random() * 2 * 24 * 60) * MINUTE;
          const requests = 1 + Math.floor(random() * 9);
          const samples = Array.from({ length: requests }, () => 10 ** (random() * 3));
          return {
            method: 'GET',
            path: paths[Math.floor(random() * paths.length)] as string,
            minute: new Date(at).toISOString(),
            requests,
            serverErrors: Math.floor(random() * 2),
            upstreamFailures: Math.floor(random() * 2),
            clientLeft: Math.floor(random() * 2),
            ttfb: wire(samples.map((ms) => ms / 2)),
            ttlb: wire(samples),
          };
        }),
      );
      const build = builds[fold % builds.length] as string;
      await db.ds.transaction((manager) =>
        repository.addMinutes(manager, project.id, { kind: 'staging', name: build }, minutes),
      );
      for (const m of minutes) add(m);
      rolledUpDuringReads += await readsAfterFold(
        fold,
        () => repository.rollUp(project.id, true),
        readAll,
        expectedAll,
      );
    }
    expect(rolledUpDuringReads).toBeGreaterThan(0);
    // Whatever still waits, rolled up: the stored rows alone answer the same.
    await repository.rollUp(project.id, true);
    expect(await waiting()).toBe(0);
    expect(await readAll()).toEqual(expectedAll());
  });

  it("a read of one endpoint reads that endpoint's minutes waiting, not its environment's", async () => {
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('found', 'Found') RETURNING id`,
    )) as [{ id: string }];
    const repository = new RuntimeRepository(db.ds);
    const now = Date.UTC(2026, 10, 29, 6, 0);
    // 20 folds of 150 endpoints at two minutes each: 6,000 minutes waiting in one production build.
    for (let fold = 0; fold < 20; fold++)
      await foldEndpoints(repository, project.id, { kind: 'production', name: 'p-1' }, now - (fold % 5) * MINUTE);
    await db.ds.query('ANALYZE runtime_minutes_added');
    const scans = await waitingScans((explaining) =>
      explaining.steps(
        {
          projectId: project.id,
          method: 'GET',
          path: '/e7',
          kind: 'production',
          name: null,
          since: new Date(now - DAY),
        },
        'hour',
      ),
    );
    // The endpoint's 40 minutes, found without reading the other 5,960.
    expect(scans).toEqual([{ rows: 40, dropped: 0 }]);
    const rows = await repository.steps(
      { projectId: project.id, method: 'GET', path: '/e7', kind: 'production', name: null, since: new Date(now - DAY) },
      'hour',
    );
    expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(80);
  });
});

describe('the version share and the gate’s totals with minutes waiting', () => {
  /** A project with endpoints GET /a and /b (documented; /c is not) and the environment rows' cells naming their versions. */
  async function projectWithVersions(slug: string): Promise<{ id: string; endpointIds: Map<string, string> }> {
    const [project] = (await db.ds.query(`INSERT INTO projects (slug, name) VALUES ($1, $1) RETURNING id`, [slug])) as [
      { id: string },
    ];
    const endpoints = (await db.ds.query(
      `INSERT INTO endpoints (project_id, method, path) VALUES ($1, 'GET', '/a'), ($1, 'GET', '/b') RETURNING id, path`,
      [project.id],
    )) as Array<{ id: string; path: string }>;
    const endpointIds = new Map(endpoints.map((e) => [e.path, e.id]));
    for (const [kind, name, cells] of CELLS) {
      const [row] = (await db.ds.query(
        `INSERT INTO environment_rows (project_id, kind, name, scope, first_seen, last_seen)
         VALUES ($1, $2, $3, $4, now(), now()) RETURNING id`,
        [project.id, kind, name, kind === 'ci' ? name : ''],
      )) as [{ id: string }];
      for (const [path, version] of Object.entries(cells))
        await db.ds.query(
          `INSERT INTO evidence_cells (row_id, endpoint_id, project_id, version, drift, last_seen)
           VALUES ($1, $2, $3, $4, false, now())`,
          [row.id, endpointIds.get(path), project.id, version],
        );
    }
    return { id: project.id, endpointIds };
  }
  /** The environment rows, and the version each one's cells name per documented endpoint. */
  const CELLS: ReadonlyArray<readonly [MatrixKind, string, Record<string, string>]> = [
    ['production', 'p-1', { '/a': '1.0', '/b': '1.0' }],
    ['production', 'p-2', { '/a': '2.0' }],
    ['ci', 'PR #1', { '/a': '2.1', '/b': '1.0' }],
    ['ci', 'PR #2', {}],
  ];
  const versionOf = (name: string, path: string): string =>
    (CELLS.find(([, n]) => n === name) as (typeof CELLS)[number])[2][path] ?? '';

  it('equal a model of every fold at every resolution, of a whole environment and of one row, whenever the roll-up runs', async () => {
    const { id: projectId, endpointIds } = await projectWithVersions('share');
    const repository = new RuntimeRepository(db.ds);
    const random = seeded(18);
    const now = Date.UTC(2026, 10, 29, 9, 0);
    // Not on a day's start: the day rows before it are left out, as the reads leave them out.
    const since = new Date(now - 30 * HOUR);
    const scopes: ReadonlyArray<readonly [MatrixKind, string | null]> = [
      ['production', null],
      ['production', 'p-2'],
      ['ci', null],
      ['ci', 'PR #1'],
    ];
    /** Every minute folded, under the version its row's cell named. */
    const folded: Array<RuntimeMinute & { kind: MatrixKind; name: string; version: string }> = [];
    const stepOf = (minute: string, ms: number): number => {
      const at = Date.parse(minute);
      return at - (at % ms);
    };
    const expected = (kind: MatrixKind, name: string | null, resolution: RuntimeResolution, ms: number) => {
      const steps = new Map<string, number>();
      const endpoints = new Map<string, number>();
      const totals = new Map<string, RuntimeSums>();
      for (const m of folded) {
        const at = stepOf(m.minute, ms);
        if (m.kind !== kind || (name !== null && m.name !== name) || at < since.getTime()) continue;
        const step = `${m.version} ${at}`;
        steps.set(step, (steps.get(step) ?? 0) + m.requests);
        const endpoint = `${endpointIds.get(m.path) ?? null} ${m.method} ${m.path} ${m.version}`;
        endpoints.set(endpoint, (endpoints.get(endpoint) ?? 0) + m.requests);
        if (m.version === '' || !endpointIds.has(m.path)) continue;
        let total = totals.get(endpoint);
        if (total === undefined) totals.set(endpoint, (total = emptySums()));
        addCounts(total, m);
        total.ttfb.addWire(m.ttfb);
        total.ttlb.addWire(m.ttlb);
      }
      return {
        resolution,
        steps: [...steps].sort(([a], [b]) => a.localeCompare(b)),
        endpoints: [...endpoints].sort(([a], [b]) => a.localeCompare(b)),
        totals: [...totals]
          .map(([key, t]) => [key, t.requests, t.serverErrors, countsOf(t.ttfb), countsOf(t.ttlb)] as const)
          .sort(([a], [b]) => a.localeCompare(b)),
      };
    };
    const read = async (kind: MatrixKind, name: string | null, resolution: RuntimeResolution) => {
      const scope = { projectId, kind, name, since };
      const [steps, endpoints, totals] = await Promise.all([
        repository.shareSteps(scope, resolution),
        repository.shareEndpoints(scope, resolution),
        repository.totals(projectId, kind, name, since, resolution, null),
      ]);
      return {
        resolution,
        steps: steps
          .map((s) => [`${s.version} ${new Date(s.at).getTime()}`, Number(s.requests)] as const)
          .sort(([a], [b]) => a.localeCompare(b)),
        endpoints: endpoints
          .map((e) => [`${e.endpointId} ${e.method} ${e.path} ${e.version}`, Number(e.requests)] as const)
          .sort(([a], [b]) => a.localeCompare(b)),
        totals: totals
          .map((t) => {
            const [ttfb, ttlb] = [new LatencyHistogram(), new LatencyHistogram()];
            ttfb.addWire(t.ttfb);
            ttlb.addWire(t.ttlb);
            return [
              `${t.endpointId} ${t.method} ${t.path} ${t.version}`,
              Number(t.requests),
              Number(t.serverErrors),
              countsOf(ttfb),
              countsOf(ttlb),
            ] as const;
          })
          .sort(([a], [b]) => a.localeCompare(b)),
      };
    };
    const readAll = () =>
      Promise.all(scopes.flatMap(([kind, name]) => RESOLUTIONS.map(([resolution]) => read(kind, name, resolution))));
    const expectedAll = () =>
      scopes.flatMap(([kind, name]) => RESOLUTIONS.map(([resolution, ms]) => expected(kind, name, resolution, ms)));

    let rolledUpDuringReads = 0;
    for (let fold = 0; fold < 24; fold++) {
      const [kind, name] = CELLS[Math.floor(random() * CELLS.length)] as (typeof CELLS)[number];
      // 10 minutes of the last 2 days (before `since` too, some minutes again), of one row.
      const minutes = foldedMinutes(
        Array.from({ length: 10 }, (): RuntimeMinute => {
          const requests = 1 + Math.floor(random() * 9);
          const samples = Array.from({ length: requests }, () => 10 ** (random() * 3));
          return {
            method: 'GET',
            path: ['/a', '/b', '/c'][Math.floor(random() * 3)] as string,
            minute: new Date(now - Math.floor(random() * 2 * 24 * 60) * MINUTE).toISOString(),
            requests,
            serverErrors: Math.floor(random() * 2),
            upstreamFailures: 0,
            clientLeft: 0,
            ttfb: wire(samples.map((ms) => ms / 2)),
            ttlb: wire(samples),
          };
        }),
      );
      await db.ds.transaction((manager) => repository.addMinutes(manager, projectId, { kind, name }, minutes));
      for (const m of minutes) folded.push({ ...m, kind, name, version: versionOf(name, m.path) });
      rolledUpDuringReads += await readsAfterFold(fold, () => repository.rollUp(projectId, true), readAll, expectedAll);
    }
    expect(rolledUpDuringReads).toBeGreaterThan(0);
    // Some of each: versions, rows and minutes before the window, so the model is not trivially met.
    expect(new Set(folded.map((m) => m.version)).size).toBeGreaterThanOrEqual(4);
    expect(folded.some((m) => Date.parse(m.minute) < since.getTime())).toBe(true);
  });

  it("a read of an environment reads the minutes waiting of its row and window, not the environment kind's", async () => {
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('window', 'Window') RETURNING id`,
    )) as [{ id: string }];
    const repository = new RuntimeRepository(db.ds);
    const now = Date.UTC(2026, 10, 29, 9, 0);
    const since = new Date(now - DAY);
    const fold = (kind: MatrixKind, name: string, ago: number) =>
      foldEndpoints(repository, project.id, { kind, name }, now - ago);
    // 20 pull requests' runs in CI, and a production build's minutes of today and of two days ago: 6,600 waiting.
    for (let pr = 1; pr <= 20; pr++) await fold('ci', `PR #${pr}`, 5 * MINUTE);
    await fold('production', 'p-1', 5 * MINUTE);
    await fold('production', 'p-1', 2 * DAY);
    await db.ds.query('ANALYZE runtime_minutes_added');

    const pr7 = { projectId: project.id, kind: 'ci' as const, name: 'PR #7', since };
    const production = { projectId: project.id, kind: 'production' as const, name: null, since };
    // One pull request's 300 minutes, without reading the other 6,300.
    expect(await waitingScans((r) => r.shareSteps(pr7, 'hour'))).toEqual([{ rows: 300, dropped: 0 }]);
    expect(await waitingScans((r) => r.shareEndpoints(pr7, 'hour'))).toEqual([{ rows: 300, dropped: 0 }]);
    // (The gate's totals read them and leave out those under no version: these folds had no cell.)
    expect(await waitingScans((r) => r.totals(project.id, 'ci', 'PR #7', since, 'hour', null))).toEqual([
      { rows: 0, dropped: 300 },
    ]);
    // Every production build's minutes of the window: today's 300, none of CI's 6,000 read (those of
    // two days ago may be read and dropped: waiting minutes are mostly recent, so the planner may
    // rather read the kind's than range over minutes).
    for (const read of [
      (r: RuntimeRepository) => r.shareSteps(production, 'hour'),
      (r: RuntimeRepository) => r.shareEndpoints(production, 'minute'),
    ]) {
      const [scan, ...more] = await waitingScans(read);
      expect(more).toEqual([]);
      expect(scan?.rows).toBe(300);
      expect(scan?.dropped).toBeLessThanOrEqual(300);
    }
    // And what they read is what waits there.
    const [steps, endpoints] = await Promise.all([
      repository.shareSteps(pr7, 'hour'),
      repository.shareEndpoints(production, 'day'),
    ]);
    expect(steps.map((s) => Number(s.requests))).toEqual([600]);
    expect(endpoints.reduce((sum, e) => sum + Number(e.requests), 0)).toBe(600);
  });
});

describe('a roll-up of a backlog of waiting minutes', () => {
  it('reads each statement’s minutes from where the last stopped, and rolls all of them up exactly', async () => {
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('backlog', 'Backlog') RETURNING id`,
    )) as [{ id: string }];
    // 50,000 minutes waiting, as 100 folds of 500 endpoints leave them: in fold order in the table,
    // each endpoint's 100 at 4 minutes of one hour, 1 to 3 requests each.
    const now = Date.UTC(2026, 10, 29, 6, 10);
    const [ttfb, ttlb] = [wire([5, 7]), wire([6, 8])];
    await db.ds.query(
      `INSERT INTO runtime_minutes_added (project_id, environment_kind, environment_name, method, path, version, minute,
                                          requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
       SELECT $1::uuid, 'production', 'build-1', 'GET', '/b' || e, 'v1', $2::timestamptz - (f % 4) * interval '1 minute',
              1 + (f + e) % 3, 0, 0, 0, $3::jsonb, $4::jsonb
         FROM generate_series(0, 99) f, generate_series(0, 499) e
        ORDER BY f, e`,
      [project.id, new Date(now).toISOString(), JSON.stringify(ttfb), JSON.stringify(ttlb)],
    );
    await db.ds.query('ANALYZE runtime_minutes_added');

    // The roll-up's statements, each with the entries it read of the table's indexes (this transaction's
    // counts, so exact).
    const statements: Array<{ sql: string; indexRead: number }> = [];
    const indexRead = async (manager: Pick<EntityManager, 'query'>): Promise<number> =>
      Number(
        (
          (await manager.query(
            `SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) AS n FROM pg_index
              WHERE indrelid = 'runtime_minutes_added'::regclass`,
          )) as [{ n: string }]
        )[0].n,
      );
    const counting = new RuntimeRepository({
      transaction: <T>(work: (manager: Pick<EntityManager, 'query'>) => Promise<T>) =>
        db.ds.transaction((manager) =>
          work({
            query: async (sql: string, parameters?: unknown[]) => {
              const before = await indexRead(manager);
              const rows: unknown = await manager.query(sql, parameters);
              statements.push({ sql, indexRead: (await indexRead(manager)) - before });
              return rows;
            },
          } as Pick<EntityManager, 'query'>),
        ),
    } as unknown as ConstructorParameters<typeof RuntimeRepository>[0]);
    expect(await counting.rollUp(project.id, true)).toBe(50_000);

    // 10 statements of 5,000 minutes (and the empty one that ends), each reading its own minutes'
    // entries and at most one endpoint's (100) again: flat, where a walk from the start read 5,000 more
    // each time (the tenth 50,000).
    const takes = statements.flatMap((s, i) => (s.sql.includes('DELETE FROM runtime_minutes_added') ? [i] : []));
    expect(takes).toHaveLength(11);
    for (const i of takes) expect(statements[i]?.indexRead).toBeLessThanOrEqual(5_100);
    // And 4 statements for each: take, the projects, lock the rows, write them.
    expect(takes.map((i, n) => (takes[n + 1] ?? statements.length) - i)).toEqual([4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1]);

    // Every minute reached its minute, hour and day rows once.
    expect(
      await db.ds.query('SELECT count(*)::int AS n FROM runtime_minutes_added WHERE project_id = $1', [project.id]),
    ).toEqual([{ n: 0 }]);
    const sums = (await db.ds.query(
      `SELECT resolution, count(*)::int AS rows, sum(requests)::int AS requests
         FROM runtime_buckets WHERE project_id = $1 GROUP BY resolution ORDER BY resolution`,
      [project.id],
    )) as Array<{ resolution: string; rows: number; requests: number }>;
    const requests = Array.from({ length: 100 * 500 }, (_, i) => 1 + ((Math.floor(i / 500) + (i % 500)) % 3)).reduce(
      (a, b) => a + b,
    );
    expect(sums).toEqual([
      { resolution: 'day', rows: 500, requests },
      { resolution: 'hour', rows: 500, requests },
      { resolution: 'minute', rows: 2_000, requests },
    ]);
    // Each endpoint's day row holds its 100 minutes' histograms.
    const histogram = (one: WireHistogram): number[] => {
      const h = new LatencyHistogram();
      for (let i = 0; i < 100; i++) h.addWire(one);
      return countsOf(h);
    };
    const days = (await db.ds.query(
      `SELECT DISTINCT ttfb::text, ttlb::text FROM runtime_buckets WHERE project_id = $1 AND resolution = 'day'`,
      [project.id],
    )) as Array<{ ttfb: string; ttlb: string }>;
    expect(days).toHaveLength(1);
    const day = { ttfb: new LatencyHistogram(), ttlb: new LatencyHistogram() };
    day.ttfb.addWireText(days[0]?.ttfb as string);
    day.ttlb.addWireText(days[0]?.ttlb as string);
    expect([countsOf(day.ttfb), countsOf(day.ttlb)]).toEqual([histogram(ttfb), histogram(ttlb)]);
  });
});

describe('a fold’s minutes under their cells’ versions', () => {
  it('reads the environment row’s cells by the row and joins them by endpoint, not every minute with every cell', async () => {
    // A row of 270 documented endpoints' cells among 223 rows, as at production scale; 200 minutes of a fold.
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('cells', 'Cells') RETURNING id`,
    )) as [{ id: string }];
    await db.ds.query(
      `INSERT INTO endpoints (project_id, method, path) SELECT $1, 'GET', '/c' || i FROM generate_series(0, 299) i`,
      [project.id],
    );
    await db.ds.query(
      `INSERT INTO environment_rows (project_id, kind, name, scope, first_seen, last_seen)
       SELECT $1, 'production', 'build-' || i, '', now(), now() FROM generate_series(0, 222) i`,
      [project.id],
    );
    await db.ds.query(
      `INSERT INTO evidence_cells (row_id, endpoint_id, version, drift, last_seen, project_id)
       SELECT r.id, e.id, 'v' || r.name, false, now(), $1 FROM environment_rows r, endpoints e
        WHERE r.project_id = $1 AND e.project_id = $1 AND substr(e.path, 3)::int % 10 <> 9`,
      [project.id],
    );
    await db.ds.query('ANALYZE endpoints, environment_rows, evidence_cells');
    const minutes: RuntimeMinute[] = Array.from({ length: 200 }, (_, i) => ({
      method: 'GET',
      path: `/c${i}`,
      minute: new Date(Date.UTC(2026, 10, 29, 7, 0)).toISOString(),
      requests: 1,
      serverErrors: 0,
      upstreamFailures: 0,
      clientLeft: 0,
      ttfb: wire([5]),
      ttlb: wire([6]),
    }));
    const repository = new RuntimeRepository(db.ds);
    // The insert's plan, run (EXPLAIN ANALYZE) in a transaction that is rolled back.
    let plan: Record<string, unknown> | undefined;
    await expect(
      db.ds.transaction((manager) =>
        repository.addMinutes(
          {
            query: async (sql: string, parameters?: unknown[]) => {
              const [row] = (await manager.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters)) as Array<{
                'QUERY PLAN': [{ Plan: Record<string, unknown> }];
              }>;
              plan = row?.['QUERY PLAN'][0].Plan;
              throw new Error('explained');
            },
          },
          project.id,
          { kind: 'production', name: 'build-7' },
          minutes,
        ),
      ),
    ).rejects.toThrow('explained');
    let joinFiltered = 0;
    const walk = (node: Record<string, unknown>): void => {
      joinFiltered += (node['Rows Removed by Join Filter'] as number | undefined) ?? 0;
      for (const child of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
    };
    walk(plan as Record<string, unknown>);
    // (Joined through the row read in the join, this plan compared each minute with each of the row's cells: 53,820.)
    expect(joinFiltered).toBeLessThanOrEqual(minutes.length);

    // And the minutes go under the versions of that row's cells ('' for the undocumented endpoints).
    await db.ds.transaction((manager) =>
      repository.addMinutes(manager, project.id, { kind: 'production', name: 'build-7' }, minutes),
    );
    expect(
      await db.ds.query(
        `SELECT version, count(*)::int AS n FROM runtime_minutes_added WHERE project_id = $1 GROUP BY version
          ORDER BY version`,
        [project.id],
      ),
    ).toEqual([
      { version: '', n: 20 },
      { version: 'vbuild-7', n: 180 },
    ]);
  });
});
