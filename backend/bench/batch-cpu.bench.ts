/**
 * PostgreSQL's CPU per batch (issue 20): the batch statement (`WRITE_BATCH`, a named prepared
 * statement as the ingest runs it, with its evidence queued) against the plain `INSERT … ON
 * CONFLICT` of the same rows, on one connection of a freshly migrated embedded PostgreSQL. The
 * scale bench's batches (40 rows over 300 endpoints, `scale.bench.ts`'s `rowsOf` kind: POST, 201
 * or 400, shapes known) go into BATCH_CPU_CAPTURES captures per contender, the contenders
 * alternated batch by batch (A B A B …) after BATCH_CPU_WARM batches each (past PostgreSQL's
 * switch to the generic plan); the CPU is the connection's backend process's, read from
 * `/proc/<pid>/schedstat` (nanoseconds on the CPU) around each statement. Printed: ms per 1,000
 * rows per contender, median of BATCH_CPU_BLOCKS blocks of BATCH_CPU_BATCHES batches, with the
 * spread. BATCH_CPU_EXPLAIN=1 first prints the plan of one batch statement after the warm-up
 * (`EXPLAIN (ANALYZE, BUFFERS, WAL, VERBOSE)`, custom plan): buffers and WAL per part, which are
 * not timings.
 *
 * Alone: `npx tsc -b ../shared && npx tsc -p bench && node dist/bench-build/bench/batch-cpu.bench.js`
 * in `backend/`. Timing: run it under the team's bench lock.
 */
import type { WireObservation } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type AggregatedRow, WRITE_BATCH, writeBatchParameters } from '../src/captures/batch-statement';
import { createDataSource } from '../src/database/data-source';
import { startEmbeddedPostgres } from '../src/database/embedded';
import { migrateUp } from '../src/database/migrate';
import { packList } from '../src/evidence/queued-payload';
import {
  loadAverage,
  median,
  percentile,
  plainInsert,
  positiveSetting as setting,
  postRow,
  random,
  runBench,
  SHAPES,
} from './harness';

const CAPTURES = setting('BATCH_CPU_CAPTURES', 40);
const WARM = setting('BATCH_CPU_WARM', 200);
const BATCHES = setting('BATCH_CPU_BATCHES', 200);
const BLOCKS = setting('BATCH_CPU_BLOCKS', 5);
const ROWS = 40;
const ENDPOINTS = 300;

/** Batch `seed`'s rows, as the agent sends them: 40 distinct endpoints of 300, mostly 201. */
function wireRows(seed: number): WireObservation[] {
  const next = random(seed);
  const picked = new Set<number>();
  while (picked.size < ROWS) picked.add(Math.floor(next() * ENDPOINTS));
  const now = new Date().toISOString();
  return [...picked].map((i): WireObservation => {
    const failed = next() < 0.1;
    return postRow(i, failed, 1 + Math.floor(next() * 20), now);
  });
}

/** The rows as the ingest folds them for the statement (sorted by key). */
function aggregated(rows: readonly WireObservation[]): AggregatedRow[] {
  return rows
    .map((o): AggregatedRow => ({
      method: o.method,
      path: o.path,
      status: o.status,
      req_ct: o.request?.contentType ?? null,
      req_fp: o.request?.shape ?? null,
      req_note: null,
      res_ct: o.response?.contentType ?? null,
      res_fp: o.response?.shape ?? null,
      res_note: null,
      query: o.query,
      req_h: o.requestHeaders,
      res_h: o.responseHeaders,
      count: o.count,
      first_seen: o.firstSeen,
      last_seen: o.lastSeen,
    }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.status - b.status));
}

/** Nanoseconds a process has run on a CPU (`/proc/<pid>/schedstat`, first field). */
function cpuNanos(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ', 1)[0]);
}

let explaining = false;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bench-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own user
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), persistent: false });
  const ds = createDataSource(database.url, 2);
  const client = new pg.Client({ connectionString: database.url });
  try {
    await ds.initialize();
    await migrateUp(ds);
    const [project] = (await ds.query(`INSERT INTO projects (slug, name) VALUES ('bench', 'Bench') RETURNING id`)) as [
      { id: string },
    ];
    await ds.query(
      `INSERT INTO shapes (fingerprint, shape) SELECT key, value FROM jsonb_each($1::jsonb) ON CONFLICT DO NOTHING`,
      [JSON.stringify(SHAPES)],
    );
    const [row] = (await ds.query(
      `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
       VALUES ($1, 'production', 'build-100', '', 'build-100', now(), now()) RETURNING id`,
      [project.id],
    )) as [{ id: string }];
    const captures = async (kind: string): Promise<string[]> => {
      const ids = Array.from({ length: CAPTURES }, () => randomUUID());
      for (const id of ids)
        await ds.query(
          `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at)
           VALUES ($1, $2, $3, $3, 'agent-start', now())`,
          [id, project.id, kind],
        );
      return ids;
    };
    const statementCaptures = await captures('production');
    const plainCaptures = await captures('local');
    await client.connect();
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];

    const contenders: Array<{ name: string; write: (n: number) => Promise<void> }> = [
      ...[
        { name: 'batch statement', text: WRITE_BATCH, statement: 'spectator_write_batch', on: statementCaptures },
        // A candidate statement goes here, as a contender of its own (captures of its own).
      ].map(({ name, text, statement, on }) => ({
        name,
        write: async (n: number) => {
          const rows = wireRows(n);
          const values = writeBatchParameters(
            {
              batchId: randomUUID(),
              projectId: project.id,
              captureId: on[n % CAPTURES] as string,
              observations: rows.length,
              shapes: [],
              maxEndpoints: 20_000,
              evidence: {
                rowId: row.id,
                build: 'build-100',
                commit: 'c100',
                exchanges: packList(rows.map((o) => ({ method: o.method, path: o.path, status: o.status }))),
                minutes: '[]',
                consumers: '[]',
              },
            },
            aggregated(rows),
          );
          await client.query('BEGIN');
          if (explaining) {
            const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, WAL, VERBOSE) ${text}`, values);
            for (const line of plan.rows) console.log(line['QUERY PLAN']);
          } else await client.query({ name: statement, text, values });
          await client.query('COMMIT');
        },
      })),
      {
        name: 'plain INSERT',
        write: (n) => plainInsert(client, plainCaptures[n % CAPTURES] as string, wireRows(n)),
      },
    ];
    const perThousand = new Map(contenders.map((c) => [c.name, [] as number[]]));
    for (let n = 0; n < WARM; n++) for (const contender of contenders) await contender.write(n);
    if (process.env.BATCH_CPU_EXPLAIN) {
      explaining = true;
      await contenders[0]!.write(WARM);
      explaining = false;
    }
    for (let block = 0; block < BLOCKS; block++) {
      const spent = new Map(contenders.map((c) => [c.name, 0]));
      for (let b = 0; b < BATCHES; b++) {
        const n = WARM + block * BATCHES + b;
        for (const contender of contenders) {
          const before = cpuNanos(pid);
          await contender.write(n);
          spent.set(contender.name, (spent.get(contender.name) ?? 0) + cpuNanos(pid) - before);
        }
      }
      for (const contender of contenders)
        perThousand.get(contender.name)?.push((spent.get(contender.name) ?? 0) / 1e6 / ((BATCHES * ROWS) / 1000));
    }
    console.log(
      `PostgreSQL CPU per 1,000 rows (one connection's backend, schedstat; ${BLOCKS} blocks of ${BATCHES} batches of ${ROWS} rows, contenders alternated, ${CAPTURES} captures each):`,
    );
    for (const [name, values] of perThousand)
      console.log(
        `  ${name}: median ${median(values).toFixed(1)} ms (blocks ${percentile(values, 0).toFixed(1)}–${percentile(values, 100).toFixed(1)})`,
      );
    console.log(`  load average ${loadAverage()}`);
  } finally {
    await client.end().catch(() => undefined);
    await ds.destroy().catch(() => undefined);
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

runBench(main);
