/**
 * Disk of batch ids (issue 20): what each committed batch leaves in `processed_batches`, kept
 * `SPECTATOR_BATCH_RETENTION_DAYS` for resend deduplication. The batch statement itself
 * (`WRITE_BATCH`) writes BATCH_IDS_CYCLES × 2,000 batches of 40 rows over 300 endpoints into one
 * capture of a freshly migrated embedded PostgreSQL; after each 2,000 the touched keys are
 * forgotten as the replicas' job does once a batch is past the views' hour (`forgetTouchedKeys`,
 * here with no age) and the table vacuumed. Printed: bytes a batch as written (keys kept), and
 * the table's growth per batch in each later cycle (keys forgotten, their room used again), heap
 * and indexes apart, and how many of the updates were HOT.
 *
 * Alone: `npx tsc -b ../shared && npx tsc -p bench && node dist/bench-build/bench/batch-ids.bench.js`
 * in `backend/` (BATCH_IDS_CYCLES, default 4).
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AggregatedRow } from '../src/captures/batch-statement';
import { WRITE_BATCH, writeBatchParameters } from '../src/captures/batch-statement';
import { createDataSource } from '../src/database/data-source';
import { startEmbeddedPostgres } from '../src/database/embedded';
import { migrateUp } from '../src/database/migrate';
import { IngestRepository } from '../src/ingest/ingest.repository';
import { loadAverage, runBench } from './harness';

const PER_CYCLE = 2_000;
const CYCLES = Math.max(2, Number(process.env.BATCH_IDS_CYCLES ?? 4));

/** Batch `b`'s 40 rows (sorted by key, as the ingest folds them) over 300 templated paths. */
function rowsOf(b: number): AggregatedRow[] {
  const now = new Date().toISOString();
  return Array.from({ length: 40 }, (_, r): AggregatedRow => {
    const i = (b * 40 + r) % 300;
    return {
      method: 'GET',
      path: `/api/v2/resources/{resource}/items${i}`,
      status: 200,
      req_ct: null,
      req_fp: null,
      req_note: null,
      res_ct: 'application/json',
      res_fp: null,
      res_note: null,
      query: ['limit', 'page'],
      req_h: ['accept', 'authorization', 'user-agent'],
      res_h: ['content-type', 'etag'],
      count: 25,
      first_seen: now,
      last_seen: now,
    };
  }).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bench-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own user
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), persistent: false });
  const ds = createDataSource(database.url, { poolSize: 2 });
  try {
    await ds.initialize();
    await migrateUp(ds);
    const [project] = (await ds.query(
      `INSERT INTO projects (slug, name) VALUES ('bench', 'Bench') RETURNING id`,
    )) as Array<{ id: string }>;
    const projectId = (project as { id: string }).id;
    const captureId = randomUUID();
    await ds.query(
      `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at)
       VALUES ($1, $2, 'production', 'production', 'agent-start', now())`,
      [captureId, projectId],
    );
    const size = async (): Promise<{ heap: number; indexes: number }> => {
      const [row] = (await ds.query(
        `SELECT pg_relation_size('processed_batches')::float8 AS heap, pg_indexes_size('processed_batches')::float8 AS indexes`,
      )) as Array<{ heap: number; indexes: number }>;
      return row as { heap: number; indexes: number };
    };
    const write = async (cycle: number): Promise<void> => {
      for (let b = 0; b < PER_CYCLE; b++)
        await ds.query(
          WRITE_BATCH,
          writeBatchParameters(
            { batchId: randomUUID(), projectId, captureId, observations: 40, shapes: [] },
            rowsOf(cycle * PER_CYCLE + b),
          ),
        );
    };
    const repository = new IngestRepository(ds);
    const start = await size();
    await write(0);
    await ds.query('VACUUM processed_batches');
    let last = await size();
    const perBatch = (from: { heap: number; indexes: number }, to: { heap: number; indexes: number }): string =>
      `${((to.heap + to.indexes - from.heap - from.indexes) / PER_CYCLE).toFixed(0)} B a batch (heap ${((to.heap - from.heap) / PER_CYCLE).toFixed(0)}, indexes ${((to.indexes - from.indexes) / PER_CYCLE).toFixed(0)})`;
    console.log(`batch ids (${PER_CYCLE} batches of 40 rows a cycle, VACUUM after each):`);
    console.log(`  as written, keys kept: ${perBatch(start, last)}`);
    await repository.forgetTouchedKeys(0, 86_400, 1_000_000);
    await ds.query('VACUUM processed_batches');
    for (let cycle = 1; cycle < CYCLES; cycle++) {
      await write(cycle);
      await repository.forgetTouchedKeys(0, 86_400, 1_000_000);
      await ds.query('VACUUM processed_batches');
      const now = await size();
      console.log(`  cycle ${cycle + 1}, keys forgotten: ${perBatch(last, now)}`);
      last = now;
    }
    await ds.query('SELECT pg_stat_force_next_flush()');
    const [updates] = (await ds.query(
      `SELECT n_tup_upd::int AS updated, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'processed_batches'`,
    )) as Array<{ updated: number; hot: number }>;
    console.log(`  updates forgetting keys: ${updates?.updated ?? 0}, of them HOT ${updates?.hot ?? 0}`);
    console.log(`  load average ${loadAverage()}`);
  } finally {
    await ds.destroy().catch(() => undefined);
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

runBench(main);
