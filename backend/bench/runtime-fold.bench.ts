/**
 * What runtime evidence costs the folds (issue 18, issue 20's fold cost): milliseconds per fold of
 * `RuntimeRepository.addMinutes` (the minutes and the cells of one environment row, in the fold's
 * transaction) and of the roll-up (`rollUp`, every ROLL_UP_EVERY folds, as a replica's 10-second
 * roll-up meets a busy production build's folds), on embedded PostgreSQL, one connection.
 *
 * One production build of ENDPOINTS endpoints; each fold adds FOLD_ENDPOINTS of them (drawn) at
 * the current minute, which moves on every FOLDS_PER_MINUTE folds, so minute rows are folded into
 * again and again as they are in a busy build. ROUNDS rounds of FOLDS folds after WARM_UP folds;
 * the median round is printed, with PostgreSQL's CPU (the connection's backend process, from
 * /proc/<pid>/schedstat) and the WAL (`pg_current_wal_insert_lsn`) per fold, of the folds and of the
 * roll-ups apart. BENCH_ROLL_UP_EVERY sets the roll-up's cadence in folds. Run each build's copy of
 * this file side by side to compare.
 */
import { performance } from 'node:perf_hooks';
import { readFile } from 'node:fs/promises';
import type { WireHistogram } from '@spectator/shared';
import { createDataSource } from '../src/database/data-source';
import { RuntimeRepository } from '../src/runtime/runtime.repository';
import { loadAverage, median, runBench, withBenchBackend } from './harness';
import { seeded } from '../test/support/seeded';

const ENDPOINTS = 1_000;
const FOLD_ENDPOINTS = Number(process.env.BENCH_FOLD_ENDPOINTS ?? 300);
const FOLDS_PER_MINUTE = 20;
/** Folds between two roll-ups: 10 is about the default 10-second cadence at this fold rate; 30 or 60 a longer one. */
const ROLL_UP_EVERY = Number(process.env.BENCH_ROLL_UP_EVERY ?? 10);
const WARM_UP = 40;
const ROUNDS = Number(process.env.BENCH_FOLD_ROUNDS ?? 5);
const FOLDS = 60;
/** Histograms of 40 requests of about 10–60 ms, as agents send them. */
const TTFB: WireHistogram = { '14': 4, '15': 7, '16': 9, '17': 8, '18': 6, '19': 4, '20': 2 };
const TTLB: WireHistogram = { '15': 5, '16': 8, '17': 9, '18': 8, '19': 5, '20': 3, '21': 2 };

async function main(): Promise<void> {
  // No roll-up of the backend's own beside the bench's.
  process.env.SPECTATOR_RUNTIME_ROLLUP_SECONDS = '3600';
  await withBenchBackend(2, async ({ pool, api }) => {
    await api('POST', '/projects', { slug: 'bench', name: 'Bench' });
    const [{ id: projectId }] = (await pool.query<{ id: string }>(`SELECT id FROM projects WHERE slug = 'bench'`))
      .rows as [{ id: string }];
    await pool.query(
      `INSERT INTO endpoints (project_id, method, path)
       SELECT $1::uuid, 'GET', '/resource' || i || '/{id}' FROM generate_series(1, $2::int) i`,
      [projectId, ENDPOINTS],
    );
    const ds = createDataSource((pool.options as { connectionString: string }).connectionString, { poolSize: 1 });
    await ds.initialize();
    const repository = new RuntimeRepository(ds);
    // The one connection's backend process: its CPU time is what PostgreSQL spends on the folds and roll-ups.
    const [{ pid }] = (await ds.query('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
    const cpuNs = async (): Promise<number> => Number((await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')[0]);
    const walBytes = async (): Promise<number> =>
      Number(
        (await pool.query<{ at: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS at`))
          .rows[0]?.at,
      );
    /** Time (ms), PostgreSQL CPU (ms) and WAL (bytes) of `work`. */
    const costOf = async (work: () => Promise<unknown>): Promise<{ ms: number; cpu: number; wal: number }> => {
      const [wal0, cpu0] = [await walBytes(), await cpuNs()];
      const t0 = performance.now();
      await work();
      const ms = performance.now() - t0;
      const [cpu1, wal1] = [await cpuNs(), await walBytes()];
      return { ms, cpu: (cpu1 - cpu0) / 1e6, wal: wal1 - wal0 };
    };
    const random = seeded(18);
    const start = Date.now() - (Date.now() % 60_000) - 60 * 60_000;
    let folded = 0;
    const fold = async (): Promise<{ ms: number; cpu: number; wal: number }> => {
      const minute = new Date(start + Math.floor(folded / FOLDS_PER_MINUTE) * 60_000).toISOString();
      const drawn = new Set<number>();
      while (drawn.size < FOLD_ENDPOINTS) drawn.add(1 + Math.floor(random() * ENDPOINTS));
      const minutes = [...drawn].map((i) => ({
        method: 'GET',
        path: `/resource${i}/{id}`,
        minute,
        requests: 40,
        serverErrors: i % 7 === 0 ? 1 : 0,
        upstreamFailures: 0,
        clientLeft: 0,
        ttfb: TTFB,
        ttlb: TTLB,
      }));
      folded++;
      return costOf(() =>
        ds.transaction((manager) =>
          repository.addMinutes(manager, projectId, { kind: 'production', name: 'p-1' }, minutes),
        ),
      );
    };
    const rollUp = () => costOf(() => repository.rollUp(null, true));
    for (let i = 0; i < WARM_UP; i++) {
      await fold();
      if (folded % ROLL_UP_EVERY === 0) await rollUp();
    }
    type Cost = { ms: number; cpu: number; wal: number };
    const zero = (): Cost => ({ ms: 0, cpu: 0, wal: 0 });
    const add = (into: Cost, cost: Cost): void => {
      into.ms += cost.ms / FOLDS;
      into.cpu += cost.cpu / FOLDS;
      into.wal += cost.wal / FOLDS;
    };
    const shown = (c: Cost): string =>
      `${c.ms.toFixed(2)} ms (PostgreSQL CPU ${c.cpu.toFixed(2)} ms, WAL ${(c.wal / 1024).toFixed(1)} KB)`;
    const rounds: Array<{ folds: Cost; rollUps: Cost }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const folds = zero();
      const rollUps = zero();
      for (let i = 0; i < FOLDS; i++) {
        add(folds, await fold());
        if (folded % ROLL_UP_EVERY === 0) add(rollUps, await rollUp());
      }
      rounds.push({ folds, rollUps });
      console.log(`round ${round + 1} a fold: addMinutes ${shown(folds)}, roll-up ${shown(rollUps)}`);
    }
    const medianOf = (pick: (r: { folds: Cost; rollUps: Cost }) => Cost): Cost => ({
      ms: median(rounds.map((r) => pick(r).ms)),
      cpu: median(rounds.map((r) => pick(r).cpu)),
      wal: median(rounds.map((r) => pick(r).wal)),
    });
    const together = (r: { folds: Cost; rollUps: Cost }): Cost => ({
      ms: r.folds.ms + r.rollUps.ms,
      cpu: r.folds.cpu + r.rollUps.cpu,
      wal: r.folds.wal + r.rollUps.wal,
    });
    console.log(
      `${FOLD_ENDPOINTS} endpoint-minutes a fold, roll-up every ${ROLL_UP_EVERY} folds, median of ${ROUNDS} rounds of ${FOLDS}, a fold: ` +
        `addMinutes ${shown(medianOf((r) => r.folds))}; roll-up ${shown(medianOf((r) => r.rollUps))}; ` +
        `together ${shown(medianOf(together))}`,
    );
    await ds.destroy();
    console.log(`load average at the end: ${loadAverage()}`);
  });
}

runBench(main);
