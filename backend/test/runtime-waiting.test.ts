/**
 * Runtime minutes waiting for the roll-up (issue 18): one row per endpoint and minute of a fold,
 * found by endpoint, added by every read; exact whenever the roll-up runs, also while a read runs.
 */
import { LatencyHistogram, type WireHistogram } from '@spectator/shared';
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

let db: MigratedDatabase;
beforeAll(async () => {
  // A database of its own: no backend rolls up beside these tests.
  db = await createMigratedDatabase();
});
afterAll(async () => {
  await db?.close();
});

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
      if (fold % 3 === 1) {
        // The roll-up beside the reads, on another connection: each read sees it before or after, never half.
        const [taken, answers] = await Promise.all([repository.rollUp(project.id, true), readAll()]);
        expect(answers).toEqual(expectedAll());
        rolledUpDuringReads += taken ?? 0;
      } else {
        expect(await readAll()).toEqual(expectedAll());
        if (fold % 3 === 2) expect(await repository.rollUp(project.id, true)).toBeGreaterThan(0);
        expect(await readAll()).toEqual(expectedAll());
      }
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
      await db.ds.transaction((manager) =>
        repository.addMinutes(
          manager,
          project.id,
          { kind: 'production', name: 'p-1' },
          Array.from({ length: 300 }, (_, i) => ({
            method: 'GET',
            path: `/e${i % 150}`,
            minute: new Date(now - (fold % 5) * MINUTE - (i < 150 ? 0 : MINUTE)).toISOString(),
            requests: 2,
            serverErrors: 0,
            upstreamFailures: 0,
            clientLeft: 0,
            ttfb: wire([5, 7]),
            ttlb: wire([6, 8]),
          })),
        ),
      );
    await db.ds.query('ANALYZE runtime_minutes_added');
    const plans: unknown[] = [];
    const explaining = new RuntimeRepository({
      query: async (sql: string, parameters: unknown[]) => {
        const [{ 'QUERY PLAN': plan }] = (await db.ds.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters)) as [
          { 'QUERY PLAN': unknown },
        ];
        plans.push(plan);
        return [];
      },
    } as unknown as ConstructorParameters<typeof RuntimeRepository>[0]);
    await explaining.steps(
      { projectId: project.id, method: 'GET', path: '/e7', kind: 'production', name: null, since: new Date(now - DAY) },
      'hour',
    );
    // Every plan node that reads runtime_minutes_added: the rows it read and those it read and dropped.
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
    walk((plans[0] as [{ Plan: Record<string, unknown> }])[0].Plan);
    // The endpoint's 40 minutes, found without reading the other 5,960.
    expect(scans).toEqual([{ rows: 40, dropped: 0 }]);
    const rows = await repository.steps(
      { projectId: project.id, method: 'GET', path: '/e7', kind: 'production', name: null, since: new Date(now - DAY) },
      'hour',
    );
    expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(80);
  });
});
