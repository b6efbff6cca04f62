/**
 * What runtime evidence costs the folds (issue 18, issue 20's fold cost): milliseconds per fold of
 * `RuntimeRepository.addMinutes` (the minutes and the cells of one environment row, in the fold's
 * transaction) and of the roll-up (`rollUp`, every ROLL_UP_EVERY folds, as a replica's 10-second
 * roll-up meets a busy production build's folds), on embedded PostgreSQL, one connection.
 *
 * One production build of ENDPOINTS endpoints; each fold adds FOLD_ENDPOINTS of them (drawn) at
 * the current minute, which moves on every FOLDS_PER_MINUTE folds, so minute rows are folded into
 * again and again as they are in a busy build. ROUNDS rounds of FOLDS folds after WARM_UP folds;
 * the median round is printed. Run each build's copy of this file side by side to compare.
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import type { WireHistogram } from '@spectator/shared';
import { createDataSource } from '../src/database/data-source';
import { RuntimeRepository } from '../src/runtime/runtime.repository';
import { median, runBench, withBenchBackend } from './harness';
import { seeded } from '../test/support/seeded';

const ENDPOINTS = 1_000;
const FOLD_ENDPOINTS = Number(process.env.BENCH_FOLD_ENDPOINTS ?? 300);
const FOLDS_PER_MINUTE = 20;
const ROLL_UP_EVERY = 10;
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
    const ds = createDataSource((pool.options as { connectionString: string }).connectionString, 1);
    await ds.initialize();
    const repository = new RuntimeRepository(ds);
    const random = seeded(18);
    const start = Date.now() - (Date.now() % 60_000) - 60 * 60_000;
    let folded = 0;
    const fold = async (): Promise<number> => {
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
      const t0 = performance.now();
      await ds.transaction((manager) =>
        repository.addMinutes(manager, projectId, { kind: 'production', name: 'p-1' }, minutes),
      );
      return performance.now() - t0;
    };
    const rollUp = async (): Promise<number> => {
      const t0 = performance.now();
      await repository.rollUp(null, true);
      return performance.now() - t0;
    };
    for (let i = 0; i < WARM_UP; i++) {
      await fold();
      if (folded % ROLL_UP_EVERY === 0) await rollUp();
    }
    const rounds: Array<{ folds: number; rollUps: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      let folds = 0;
      let rollUps = 0;
      for (let i = 0; i < FOLDS; i++) {
        folds += await fold();
        if (folded % ROLL_UP_EVERY === 0) rollUps += await rollUp();
      }
      rounds.push({ folds: folds / FOLDS, rollUps: rollUps / FOLDS });
      console.log(
        `round ${round + 1}: addMinutes ${(folds / FOLDS).toFixed(2)} ms a fold, roll-up ${(rollUps / FOLDS).toFixed(2)} ms a fold`,
      );
    }
    const both = rounds.map((r) => r.folds + r.rollUps);
    console.log(
      `${FOLD_ENDPOINTS} endpoint-minutes a fold, roll-up every ${ROLL_UP_EVERY} folds, median of ${ROUNDS} rounds of ${FOLDS}: ` +
        `addMinutes ${median(rounds.map((r) => r.folds)).toFixed(2)} ms, roll-up ${median(rounds.map((r) => r.rollUps)).toFixed(2)} ms, ` +
        `together ${median(both).toFixed(2)} ms a fold`,
    );
    await ds.destroy();
    console.log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  });
}

runBench(main);
