/**
 * The runtime series as the route reads it (issue 18's query): histograms read from jsonb's text
 * without JSON.parse, several rows of one step and version summed, on real PostgreSQL.
 */
import fc from 'fast-check';
import { HISTOGRAM_MAX_INDEX, HISTOGRAM_MIN_INDEX, LatencyHistogram, type WireHistogram } from '@spectator/shared';
import pino from 'pino';
import type { Runtime } from '../src/config/runtime';
import type { PartitionsRepository } from '../src/partitions/partitions.repository';
import type { ProjectEntity } from '../src/projects/project.entity';
import { RuntimeRepository } from '../src/runtime/runtime.repository';
import { RuntimeService } from '../src/runtime/runtime.service';
import type { VersionStore } from '../src/versions/version-store';
import { createMigratedDatabase, type MigratedDatabase } from './support';
import { eventually } from './support/evidence-helpers';

const HOUR = 3_600_000;

/**
 * Histograms in wire form: any buckets in range, counts small or large (as stored ones grow), their
 * total below 2^53 so it is exact in any order of adding.
 */
const wireHistogram = fc.dictionary(
  fc.integer({ min: HISTOGRAM_MIN_INDEX, max: HISTOGRAM_MAX_INDEX }).map(String),
  fc.oneof(fc.nat(100), fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 200) })),
  { maxKeys: 30 },
);

const countsOf = (histogram: LatencyHistogram): number[] => [...histogram.counts, histogram.total];

let db: MigratedDatabase;
beforeAll(async () => {
  db = await createMigratedDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('runtime series', () => {
  it('reads histograms from the text PostgreSQL writes for jsonb as JSON.parse would, into both histograms given', async () => {
    const wires = fc.sample(wireHistogram, { numRuns: 400, seed: 18 });
    // Empty; the end buckets; the longest count read from the text (15 digits) and a longer one.
    wires.push({}, { [HISTOGRAM_MIN_INDEX]: 1, [HISTOGRAM_MAX_INDEX]: 999_999_999_999_999 }, { '-1': 3, '0': 2 });
    wires.push({ '7': Number.MAX_SAFE_INTEGER - 5 });
    const texts = (
      (await db.ds.query(
        `SELECT w::jsonb::text AS text FROM unnest($1::text[]) WITH ORDINALITY AS u(w, i) ORDER BY i`,
        [wires.map((wire) => JSON.stringify(wire))],
      )) as Array<{ text: string }>
    ).map((row) => row.text);
    expect(texts).toHaveLength(wires.length);
    texts.forEach((text, i) => {
      const parsed = new LatencyHistogram().addWire(JSON.parse(text) as WireHistogram);
      expect(countsOf(parsed)).toEqual(countsOf(new LatencyHistogram().addWire(wires[i] as WireHistogram)));
      const also = new LatencyHistogram().addWire({ '20': 5 });
      const read = new LatencyHistogram().addWire({ '20': 5 }).addWireText(text, also);
      expect({ text, counts: countsOf(read) }).toEqual({ text, counts: countsOf(parsed.addWire({ '20': 5 })) });
      expect(countsOf(also)).toEqual(countsOf(read));
    });
  });

  it('reads text in any other JSON form, or out of range, as JSON.parse and addWire do', () => {
    for (const text of ['{"14":6,"-3":1}', '{ "14": 6 }', '{"14": 6.0}', '{"14": 1e3}', '{"14": 12345678901234567}'])
      expect({ text, counts: countsOf(new LatencyHistogram().addWireText(text)) }).toEqual({
        text,
        counts: countsOf(new LatencyHistogram().addWire(JSON.parse(text) as WireHistogram)),
      });
    // Nothing of a text is counted unless all of it is read.
    const partly = new LatencyHistogram().addWireText('{"14": 6, "15": 2.5}');
    expect(partly.total).toBe(8.5);
  });

  it('sums the rows of several builds of one version per step, and each version over the window', async () => {
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('series', 'Series') RETURNING id, slug`,
    )) as [ProjectEntity];
    // A seeded draw: 3 builds, 2 versions, 48 hours, one row per key; most steps have rows of several builds.
    const small = fc.dictionary(
      fc.integer({ min: HISTOGRAM_MIN_INDEX, max: HISTOGRAM_MAX_INDEX }).map(String),
      fc.integer({ min: 1, max: 100 }),
      { maxKeys: 12 },
    );
    const rows = fc.sample(
      fc.uniqueArray(
        fc.record({
          build: fc.constantFrom('b-1', 'b-2', 'b-3'),
          version: fc.constantFrom('1.0', '2.0'),
          hour: fc.integer({ min: 0, max: 47 }),
          requests: fc.integer({ min: 1, max: 500 }),
          serverErrors: fc.nat(5),
          clientLeft: fc.nat(3),
          ttfb: small,
          ttlb: small,
        }),
        { selector: (r) => `${r.build} ${r.version} ${r.hour}`, minLength: 200, maxLength: 200 },
      ),
      { numRuns: 1, seed: 20 },
    )[0]!;
    const now = Date.UTC(2026, 10, 29, 3, 30);
    const start = now - (now % HOUR) - 47 * HOUR;
    await db.ds.query(
      `INSERT INTO runtime_buckets (project_id, method, path, environment_kind, environment_name, version, resolution,
                                    bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
       SELECT $1::uuid, 'GET', '/s/{id}', 'production', r.build, r.version, 'hour', r.bucket, r.requests, r.errors, 0,
              r.client_left, r.ttfb::jsonb, r.ttlb::jsonb
         FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::int[], $6::int[], $7::int[], $8::text[], $9::text[])
              AS r(build, version, bucket, requests, errors, client_left, ttfb, ttlb)`,
      [
        project.id,
        rows.map((r) => r.build),
        rows.map((r) => r.version),
        rows.map((r) => new Date(start + r.hour * HOUR)),
        rows.map((r) => r.requests),
        rows.map((r) => r.serverErrors),
        rows.map((r) => r.clientLeft),
        rows.map((r) => JSON.stringify(r.ttfb)),
        rows.map((r) => JSON.stringify(r.ttlb)),
      ],
    );
    const service = new RuntimeService(
      new RuntimeRepository(db.ds),
      {} as PartitionsRepository,
      { endpointIdOf: () => Promise.resolve(null) } as unknown as VersionStore,
      {
        log: pino({ level: 'silent' }),
        config: { runtimeRetention: { minuteDays: 1, hourDays: 35, dayDays: 400 }, runtimeRollupSeconds: 10 },
      } as unknown as Runtime,
    );
    const answer = await service.routeSeries(
      project,
      { method: 'GET', path: '/s/{id}' },
      { environment: 'production', since: new Date(start).toISOString(), step: 'hour' },
      new Date(now),
    );

    // What the draw adds up to, per version and hour and per version, through addWire.
    const micros = (ms: number): number => Math.round(ms * 1000) / 1000;
    const percentilesOf = (histogram: LatencyHistogram) => {
      const at = (q: number): number => micros(histogram.quantile(q) as number);
      return histogram.total === 0 ? null : { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
    };
    const sums = new Map<
      string,
      { requests: number; serverErrors: number; ttfb: LatencyHistogram; ttlb: LatencyHistogram }
    >();
    const add = (key: string, r: (typeof rows)[number]) => {
      let s = sums.get(key);
      if (s === undefined)
        sums.set(
          key,
          (s = { requests: 0, serverErrors: 0, ttfb: new LatencyHistogram(), ttlb: new LatencyHistogram() }),
        );
      s.requests += r.requests;
      s.serverErrors += r.serverErrors;
      s.ttfb.addWire(r.ttfb);
      s.ttlb.addWire(r.ttlb);
    };
    for (const r of rows) {
      add(`${r.version} ${r.hour}`, r);
      add(r.version, r);
    }
    const expected = ['1.0', '2.0'].map((version) => ({
      version,
      total: (({ requests, serverErrors, ttfb, ttlb }) => ({
        requests,
        serverErrors,
        ttfb: percentilesOf(ttfb),
        ttlb: percentilesOf(ttlb),
      }))(sums.get(version)!),
      points: Array.from({ length: 48 }, (_, hour) => ({ hour, s: sums.get(`${version} ${hour}`) }))
        .filter(({ s }) => s !== undefined)
        .map(({ hour, s }) => ({
          at: new Date(start + hour * HOUR).toISOString(),
          requests: s!.requests,
          serverErrors: s!.serverErrors,
          ttfb: percentilesOf(s!.ttfb),
          ttlb: percentilesOf(s!.ttlb),
        })),
    }));
    // Several builds in one step and version: the case that sums rows.
    expect(rows.length).toBeGreaterThan(2 * 48);
    const answered = answer.versions.map(({ version, total, points }) => ({
      version,
      total: { requests: total.requests, serverErrors: total.serverErrors, ttfb: total.ttfb, ttlb: total.ttlb },
      points: points.map(({ at, requests, serverErrors, ttfb, ttlb }) => ({ at, requests, serverErrors, ttfb, ttlb })),
    }));
    expect(answered).toEqual(expected);
  });

  it('rolls waiting minutes up at the configured cadence (SPECTATOR_RUNTIME_ROLLUP_SECONDS), not only at start', async () => {
    const [project] = (await db.ds.query(
      `INSERT INTO projects (slug, name) VALUES ('cadence', 'Cadence') RETURNING id`,
    )) as [{ id: string }];
    const service = new RuntimeService(
      new RuntimeRepository(db.ds),
      {} as PartitionsRepository,
      {} as VersionStore,
      {
        log: pino({ level: 'silent' }),
        config: { runtimeRetention: { minuteDays: 2, hourDays: 35, dayDays: 400 }, runtimeRollupSeconds: 1 },
      } as unknown as Runtime,
    );
    const waiting = async (): Promise<number> =>
      (
        (await db.ds.query(`SELECT count(*)::int AS n FROM runtime_minutes_added WHERE project_id = $1`, [
          project.id,
        ])) as [{ n: number }]
      )[0].n;
    service.onModuleInit();
    try {
      // The first roll-up runs at start; a fold's minutes added after it wait for the next one.
      await eventually(
        () => service.rollUpMinutes(true, project.id),
        (taken) => taken === 0,
      );
      await db.ds.query(
        `INSERT INTO runtime_minutes_added (project_id, environment_kind, environment_name, method, path, version, minute,
                                            requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         VALUES ($1, 'production', 'p-1', 'GET', '/c', '1.0', '2026-11-29T03:05:00+00:00', 3, 0, 0, 0,
                 '{"14": 3}', '{"15": 3}')`,
        [project.id],
      );
      expect(await waiting()).toBe(1);
      await eventually(waiting, (n) => n === 0);
      expect(
        await db.ds.query(
          `SELECT resolution, requests::int FROM runtime_buckets WHERE project_id = $1 ORDER BY resolution`,
          [project.id],
        ),
      ).toEqual([
        { resolution: 'day', requests: 3 },
        { resolution: 'hour', requests: 3 },
        { resolution: 'minute', requests: 3 },
      ]);
    } finally {
      await service.onModuleDestroy();
    }
  });
});
