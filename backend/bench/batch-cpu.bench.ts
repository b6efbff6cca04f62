/**
 * PostgreSQL's CPU per batch (issue 20): the batch statement (`WRITE_BATCH`, a named prepared
 * statement as the ingest runs it, with its evidence queued) against the plain `INSERT … ON
 * CONFLICT` of the same rows, on one connection of a freshly migrated embedded PostgreSQL. The
 * scale bench's batches (40 rows over 300 endpoints, `scaleRows` as its agents send them: POST, 201
 * or 400, shapes known, timings and consumers; the queued evidence packed as the ingest packs it:
 * exchanges, runtime minutes and consumer days, 22 KB of text a batch; BATCH_CPU_BARE=1 queues the
 * exchanges' keys alone and no minutes or consumer days, as before session 23) go into
 * BATCH_CPU_CAPTURES captures per contender, the contenders
 * alternated batch by batch (A B A B …) after BATCH_CPU_WARM batches each (past PostgreSQL's
 * switch to the generic plan); the CPU is the connection's backend process's, read from
 * `/proc/<pid>/schedstat` (nanoseconds on the CPU) around each statement. Printed: ms per 1,000
 * rows per contender, median of BATCH_CPU_BLOCKS blocks of BATCH_CPU_BATCHES batches, with the
 * spread, and how often each prepared statement was planned generic or custom
 * (`pg_prepared_statements`; BATCH_CPU_PLAN_CACHE sets `plan_cache_mode`). BATCH_CPU_EXPLAIN=1
 * first prints the plan of each batch statement contender after the warm-up (`EXPLAIN (ANALYZE,
 * BUFFERS, WAL, VERBOSE)`, the plan PostgreSQL's plan cache picks for it): buffers and WAL per part, which are
 * not timings. BATCH_CPU_COUNT=N counts instead of timing (no lock needed): N batches of each
 * contender after the warm-up, as the ingest runs them, and per batch the connection's WAL
 * (records, full pages, bytes; commit included: `pg_stat_get_backend_wal`) and shared buffers read
 * or hit per table (`pg_statio_user_tables`, statistics flushed around each batch); then how many
 * of the capture summaries the batch statement wrote were inserts, and the observations' size as
 * written. BATCH_CPU_SETUP: SQL run after the migrations (diagnosis: a schema change tried on this
 * build, e.g. a table's fillfactor reset). BATCH_CPU_KEY=md5 (diagnosis, session 31): the observations'
 * aggregate key narrowed to `capture_id`, an md5 of its text columns as a `uuid`, `project_id` and
 * `capture_created_at` (`MD5_KEY`), for both contenders: what the key's width costs.
 *
 * Alone: `npx tsc -b ../shared && npx tsc -p bench && node dist/bench-build/bench/batch-cpu.bench.js`
 * in `backend/`. Timing: run it under the team's bench lock.
 */
import { type BatchMessage, type WireObservation } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type AggregatedRow, batchPart, WRITE_BATCH, writeBatchStatement } from '../src/captures/batch-statement';
import { createDataSource } from '../src/database/data-source';
import { startEmbeddedPostgres } from '../src/database/embedded';
import { migrateUp } from '../src/database/migrate';
import { packedConsumerDays } from '../src/consumers/consumers.service';
import { packedExchanges } from '../src/evidence/evidence.service';
import { packList } from '../src/evidence/queued-payload';
import { packedRuntimeMinutes } from '../src/runtime/runtime.service';
import {
  loadAverage,
  median,
  percentile,
  plainInsert,
  positiveSetting as setting,
  postRow,
  random,
  runBench,
  scaleRows,
  SHAPES,
} from './harness';

const CAPTURES = setting('BATCH_CPU_CAPTURES', 40);
const WARM = setting('BATCH_CPU_WARM', 200);
const BATCHES = setting('BATCH_CPU_BATCHES', 200);
const BLOCKS = setting('BATCH_CPU_BLOCKS', 5);
const COUNT = process.env.BATCH_CPU_COUNT ? setting('BATCH_CPU_COUNT', 1) : 0;
const ROWS = 40;
const ENDPOINTS = 300;
/** BATCH_CPU_BARE=1: rows without timings and consumers, their evidence the exchanges' keys alone (before session 23). */
const BARE = process.env.BATCH_CPU_BARE === '1';

/**
 * BATCH_CPU_CEILING=1: contenders that leave parts of the batch statement out, 1-row batches (the
 * fixed cost a statement), and statements inserting into the week's partition of observations
 * directly (what routing each row through the partitioned table costs).
 */
const CEILING = process.env.BATCH_CPU_CEILING === '1';
/** The batch statement without capture summaries (nothing written to `capture_endpoints` or its counts). */
const NO_SUMMARIES = WRITE_BATCH.replace('WHERE k.grown\n', 'WHERE k.grown AND false\n');
/** The plain INSERT's work plus the batch-id claim: capture lock, claim, observations; the shapes typed, unused. */
const LEAN = `${WRITE_BATCH.slice(0, WRITE_BATCH.indexOf('), new_shapes AS ('))}
  ), unused AS (SELECT $4::jsonb
  ), ${WRITE_BATCH.slice(WRITE_BATCH.indexOf('offered AS ('), WRITE_BATCH.indexOf('), known AS ('))}
  ), upserted AS (${WRITE_BATCH.slice(WRITE_BATCH.indexOf('\n    INSERT INTO observations'), WRITE_BATCH.indexOf('    RETURNING o.project_id'))}    RETURNING 1
  )
  SELECT EXISTS (SELECT FROM written w WHERE w.n = b.n) AS claimed, EXISTS (SELECT FROM capture c WHERE c.n = b.n) AS captured,
         NULL::text AS queued
    FROM batches b ORDER BY b.n`.replace('FROM input r JOIN batches', 'FROM offered r JOIN batches');
/** BATCH_CPU_KEY=md5: the observations' aggregate key as one md5 of its columns beside the capture's (diagnosis). */
const MD5 = process.env.BATCH_CPU_KEY === 'md5';
if (!MD5 && process.env.BATCH_CPU_KEY !== undefined)
  throw new Error(`BATCH_CPU_KEY is md5, not ${process.env.BATCH_CPU_KEY}`);
/** The narrowed key's `ON CONFLICT` target and its index (BATCH_CPU_KEY=md5). */
const MD5_KEY = `(capture_id, (md5(method || E'\\n' || path || E'\\n' || status::text || E'\\n' || coalesce(request_content_type, ' ')
  || E'\\n' || coalesce(request_shape, ' ') || E'\\n' || coalesce(response_content_type, ' ') || E'\\n'
  || coalesce(response_shape, ' '))::uuid), project_id, capture_created_at)`;
/** A statement's text with its observations' `ON CONFLICT` target the narrowed key's (BATCH_CPU_KEY=md5); as given otherwise. */
function keyed(text: string): string {
  if (!MD5) return text;
  const narrowed = text.replace(
    /ON CONFLICT \(capture_id, method, path, status, [^;]*?, project_id, capture_created_at\)/,
    `ON CONFLICT ${MD5_KEY}`,
  );
  if (narrowed === text) throw new Error('no observations ON CONFLICT target to narrow');
  return narrowed;
}
/** BATCH_CPU_PLAN_CACHE: the measured connection's `plan_cache_mode` (diagnosis: `force_custom_plan`, `force_generic_plan`; PostgreSQL's `auto` otherwise). */
const PLAN_CACHE = process.env.BATCH_CPU_PLAN_CACHE ?? 'auto';
if (!['auto', 'force_custom_plan', 'force_generic_plan'].includes(PLAN_CACHE))
  throw new Error(`BATCH_CPU_PLAN_CACHE is auto, force_custom_plan or force_generic_plan, not ${PLAN_CACHE}`);
/** BATCH_CPU_TOGETHER=k: the batch statement also writes k batches (of k captures) in one statement, as a replica's writer does under load. */
const TOGETHER = setting('BATCH_CPU_TOGETHER', 1);

/** Batch `seed`'s rows, as the agent sends them: 40 distinct endpoints of 300, mostly 201. */
function wireRows(seed: number): WireObservation[] {
  if (!BARE) return scaleRows(seed, ROWS, ENDPOINTS);
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

/** A batch's queued lists as the ingest packs them (`EvidenceService.queuedEvidence`), or the bare keys (BATCH_CPU_BARE). */
function queuedLists(rows: WireObservation[]): { exchanges: string; minutes: string; consumers: string } {
  if (BARE)
    return {
      exchanges: packList(rows.map((o) => ({ method: o.method, path: o.path, status: o.status }))),
      minutes: '[]',
      consumers: '[]',
    };
  const batch: BatchMessage = {
    type: 'batch',
    batchId: randomUUID(),
    captureId: randomUUID(),
    shapes: {},
    observations: rows,
  };
  return {
    exchanges: packedExchanges(aggregated(rows)),
    minutes: packedRuntimeMinutes(batch),
    consumers: packedConsumerDays(batch),
  };
}

/** Nanoseconds a process has run on a CPU (`/proc/<pid>/schedstat`, first field). */
function cpuNanos(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ', 1)[0]);
}

let explaining = false;
/** What a backend has done so far: shared buffers read or hit per table (partitions under their parent), and its WAL. */
interface Work {
  buffers: Map<string, number>;
  walRecords: number;
  walFpi: number;
  walBytes: number;
}

/**
 * This backend's counts so far: its pending statistics flushed first (`pg_stat_force_next_flush`
 * takes effect when the backend goes idle after that statement), then read in a statement of their own.
 */
async function workSoFar(client: pg.Client): Promise<Work> {
  await client.query('SELECT pg_stat_force_next_flush()');
  const { rows } = await client.query<{ name: string; buffers: string }>(
    `SELECT coalesce(i.inhparent::regclass::text, s.relname) AS name,
            sum(s.heap_blks_hit + s.heap_blks_read + coalesce(s.idx_blks_hit, 0) + coalesce(s.idx_blks_read, 0)
                + coalesce(s.toast_blks_hit, 0) + coalesce(s.toast_blks_read, 0) + coalesce(s.tidx_blks_hit, 0) + coalesce(s.tidx_blks_read, 0))::text AS buffers
       FROM pg_statio_user_tables s LEFT JOIN pg_inherits i ON i.inhrelid = s.relid
      GROUP BY 1`,
  );
  const [wal] = (
    await client.query<{ records: string; fpi: string; bytes: string }>(
      'SELECT wal_records::text AS records, wal_fpi::text AS fpi, wal_bytes::text AS bytes FROM pg_stat_get_backend_wal(pg_backend_pid())',
    )
  ).rows as [{ records: string; fpi: string; bytes: string }];
  return {
    buffers: new Map(rows.map((row) => [row.name, Number(row.buffers)])),
    walRecords: Number(wal.records),
    walFpi: Number(wal.fpi),
    walBytes: Number(wal.bytes),
  };
}

/** What happened between two counts (`after` − `before`), added to `into`. */
function addWork(into: Work, before: Work, after: Work): void {
  for (const [name, buffers] of after.buffers) {
    const spent = buffers - (before.buffers.get(name) ?? 0);
    if (spent !== 0) into.buffers.set(name, (into.buffers.get(name) ?? 0) + spent);
  }
  into.walRecords += after.walRecords - before.walRecords;
  into.walFpi += after.walFpi - before.walFpi;
  into.walBytes += after.walBytes - before.walBytes;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bench-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own user
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), persistent: false });
  const ds = createDataSource(database.url, { poolSize: 2 });
  const client = new pg.Client({ connectionString: database.url });
  try {
    await ds.initialize();
    await migrateUp(ds);
    if (MD5)
      await ds.query(
        `DROP INDEX observations_aggregate_key; CREATE UNIQUE INDEX observations_md5_key ON observations ${MD5_KEY}`,
      );
    if (process.env.BATCH_CPU_SETUP) await ds.query(process.env.BATCH_CPU_SETUP);
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
    await client.query(`SET plan_cache_mode = ${PLAN_CACHE}`);
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];

    // The week's partition of observations the captures write to (CEILING: inserting into it
    // directly, without tuple routing, shows what routing costs a statement).
    const [{ partition }] = (
      await client.query<{ partition: string }>(
        `SELECT 'observations_' || to_char(date_trunc('week', now(), 'UTC') AT TIME ZONE 'UTC', 'YYYYMMDD') AS partition`,
      )
    ).rows as [{ partition: string }];
    const direct = (text: string): string =>
      text.replace('INSERT INTO observations AS o', `INSERT INTO ${partition} AS o`);
    const variants = CEILING
      ? [
          {
            name: 'batch statement into its partition',
            text: direct(WRITE_BATCH),
            statement: 'ceiling_direct',
            queue: true,
            rows: ROWS,
          },
          {
            name: 'claim + observations into its partition',
            text: direct(LEAN),
            statement: 'ceiling_lean_direct',
            queue: false,
            rows: ROWS,
          },
          {
            name: 'claim + observations into its partition, 1 row',
            text: direct(LEAN),
            statement: 'ceiling_lean_direct',
            queue: false,
            rows: 1,
          },
          { name: 'batch statement', text: WRITE_BATCH, statement: 'spectator_write_batch', queue: true, rows: ROWS },
          { name: 'no queue row', text: WRITE_BATCH, statement: 'spectator_write_batch', queue: false, rows: ROWS },
          { name: 'no summaries', text: NO_SUMMARIES, statement: 'ceiling_no_summaries', queue: true, rows: ROWS },
          { name: 'claim + observations', text: LEAN, statement: 'ceiling_lean', queue: false, rows: ROWS },
          {
            name: 'batch statement, 1 row',
            text: WRITE_BATCH,
            statement: 'spectator_write_batch',
            queue: true,
            rows: 1,
          },
          { name: 'claim + observations, 1 row', text: LEAN, statement: 'ceiling_lean', queue: false, rows: 1 },
        ]
      : [{ name: 'batch statement', text: WRITE_BATCH, statement: 'spectator_write_batch', queue: true, rows: ROWS }];
    const all = [
      ...variants.map((v) => ({ ...v, together: 1 })),
      ...(TOGETHER > 1
        ? [
            {
              name: `${TOGETHER} batches a statement`,
              text: '',
              statement: '',
              queue: true,
              rows: ROWS * TOGETHER,
              together: TOGETHER,
            },
          ]
        : []),
    ];
    const capturesOf = new Map<string, string[]>();
    for (const v of all)
      capturesOf.set(
        v.name,
        v.name === 'batch statement'
          ? statementCaptures
          : (await Promise.all(Array.from({ length: v.together }, () => captures('production')))).flat(),
      );
    const plainOne = await captures('local');
    const contenders: Array<{ name: string; rows: number; write: (n: number) => Promise<void> }> = [
      ...all.map(({ name, text, statement, queue, rows: size, together }) => ({
        name,
        rows: size,
        write: async (n: number) => {
          const on = capturesOf.get(name) as string[];
          const rows = wireRows(n).slice(0, size);
          const lists = queue ? queuedLists(rows) : null;
          const folded = aggregated(rows);
          // Batch n of each of `together` sets of captures: each capture gets the same batches as the single contender's.
          const parts = Array.from({ length: together }, (_, k) =>
            batchPart(
              {
                batchId: randomUUID(),
                projectId: project.id,
                captureId: on[k * CAPTURES + (n % CAPTURES)] as string,
                observations: rows.length,
                shapes: [],
                maxEndpoints: 20_000,
                ...(lists ? { evidence: { rowId: row.id, build: 'build-100', commit: 'c100', ...lists } } : {}),
              },
              folded,
            ),
          );
          const made = writeBatchStatement(parts);
          const query =
            together > 1
              ? { ...made, text: keyed(made.text) }
              : { name: statement, text: keyed(text), values: made.values };
          await client.query('BEGIN');
          if (explaining) {
            // Through a prepared statement of its own, run as often as PostgreSQL needs to choose
            // (5 custom plans), so the plan is the one the plan cache picks (see BATCH_CPU_PLAN_CACHE).
            const prepared = `explained_${name.replace(/\W/g, '_')}`;
            const literal = (v: unknown): string =>
              v === null ? 'NULL' : typeof v === 'number' ? String(v) : client.escapeLiteral(String(v));
            const execute = `EXECUTE ${prepared}(${query.values.map(literal).join(', ')})`;
            await client.query(`PREPARE ${prepared} AS ${query.text}`);
            for (let k = 0; k < 6; k++) await client.query(execute);
            await client.query('ROLLBACK');
            await client.query('BEGIN');
            const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, WAL, VERBOSE) ${execute}`);
            console.log(`${name}:`);
            for (const line of plan.rows) console.log(line['QUERY PLAN']);
          } else await client.query(query);
          await client.query('COMMIT');
        },
      })),
      {
        name: 'plain INSERT',
        rows: ROWS,
        write: (n) =>
          plainInsert(client, plainCaptures[n % CAPTURES] as string, wireRows(n), MD5 ? MD5_KEY : undefined),
      },
      ...(CEILING
        ? [
            {
              name: 'plain INSERT, 1 row',
              rows: 1,
              write: (n: number) =>
                plainInsert(
                  client,
                  plainOne[n % CAPTURES] as string,
                  wireRows(n).slice(0, 1),
                  MD5 ? MD5_KEY : undefined,
                ),
            },
          ]
        : []),
    ];
    const perThousand = new Map(contenders.map((c) => [c.name, [] as number[]]));
    for (let n = 0; n < WARM; n++) for (const contender of contenders) await contender.write(n);
    if (process.env.BATCH_CPU_EXPLAIN) {
      explaining = true;
      for (const contender of contenders.slice(0, all.length)) await contender.write(WARM);
      explaining = false;
    }
    if (COUNT > 0) {
      const spent = new Map(
        contenders.map((c): [string, Work] => [c.name, { buffers: new Map(), walRecords: 0, walFpi: 0, walBytes: 0 }]),
      );
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
      const records = new Map(contenders.map((c) => [c.name, new Map<string, { records: number; bytes: number }>()]));
      const insertPosition = async (): Promise<string> =>
        (
          (await client.query<{ at: string }>('SELECT pg_current_wal_insert_lsn()::text AS at')).rows[0] as {
            at: string;
          }
        ).at;
      for (let b = 0; b < COUNT; b++)
        for (const contender of contenders) {
          const before = await workSoFar(client);
          const from = await insertPosition();
          await contender.write(WARM + b);
          const to = await insertPosition();
          addWork(spent.get(contender.name) as Work, before, await workSoFar(client));
          // Each record by the relation of its first block and its type (other backends' records may fall in).
          const { rows } = await client.query<{ key: string; n: string; bytes: string }>(
            `SELECT coalesce(pg_filenode_relation(0, substring(block_ref from 'rel [0-9]+/[0-9]+/([0-9]+)')::oid)::regclass::text, '-')
                    || ' ' || resource_manager || ':' || record_type AS key, count(*)::text AS n, sum(record_length)::text AS bytes
               FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) GROUP BY 1`,
            [from, to],
          );
          const into = records.get(contender.name) as Map<string, { records: number; bytes: number }>;
          for (const row of rows) {
            const was = into.get(row.key) ?? { records: 0, bytes: 0 };
            into.set(row.key, { records: was.records + Number(row.n), bytes: was.bytes + Number(row.bytes) });
          }
        }
      console.log(
        `Per batch of ${ROWS} rows (mean of ${COUNT} after ${WARM} warm-up batches each, ${CAPTURES} captures each; counts, not timings):`,
      );
      for (const [name, work] of spent) {
        const perBatch = (n: number): string => (n / COUNT).toFixed(1);
        const tables = [...work.buffers].sort(([, x], [, y]) => y - x);
        console.log(
          `  ${name}: WAL ${perBatch(work.walRecords)} records, ${perBatch(work.walFpi)} full pages, ${perBatch(work.walBytes)} bytes; ` +
            `buffers ${perBatch(tables.reduce((sum, [, n]) => sum + n, 0))} (${tables.map(([table, n]) => `${table} ${perBatch(n)}`).join(', ')})`,
        );
        const kinds = [...(records.get(name) ?? [])].sort(([, x], [, y]) => y.bytes - x.bytes);
        console.log(
          `    WAL by relation and record: ${kinds.map(([key, k]) => `${key} ${perBatch(k.records)}/${perBatch(k.bytes)} B`).join('; ')}`,
        );
      }
      const [written] = (
        await client.query<{ summaries: string; inserted: string }>(
          `SELECT (SELECT count(*) FROM capture_endpoints WHERE capture_id = ANY($1::uuid[]))::text AS inserted,
                  (SELECT sum(cardinality(touched_paths)) FROM processed_batches WHERE capture_id = ANY($1::uuid[]))::text AS summaries`,
          [statementCaptures],
        )
      ).rows as [{ summaries: string; inserted: string }];
      console.log(
        `  capture summaries written by the batch statement: ${written.summaries}, of them inserts ${written.inserted}`,
      );
      const [size] = (
        await client.query<{ heap: string; indexes: string; live: string }>(
          `SELECT sum(pg_relation_size(t.relid))::text AS heap, sum(pg_indexes_size(t.relid))::text AS indexes,
                  (SELECT count(*) FROM observations)::text AS live
             FROM pg_partition_tree('observations') t WHERE t.isleaf`,
        )
      ).rows as [{ heap: string; indexes: string; live: string }];
      console.log(
        `  observations as written (both contenders, warm-up included): heap ${size.heap} B, indexes ${size.indexes} B, ${size.live} live rows`,
      );
      return;
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
        perThousand
          .get(contender.name)
          ?.push((spent.get(contender.name) ?? 0) / 1e6 / ((BATCHES * contender.rows) / 1000));
    }
    console.log(
      `PostgreSQL CPU per 1,000 rows (one connection's backend, schedstat; ${BLOCKS} blocks of ${BATCHES} batches of ${ROWS} rows, contenders alternated, ${CAPTURES} captures each):`,
    );
    for (const contender of contenders) {
      const values = perThousand.get(contender.name) as number[];
      console.log(
        `  ${contender.name}: median ${median(values).toFixed(1)} ms (blocks ${percentile(values, 0).toFixed(1)}–${percentile(values, 100).toFixed(1)}); per batch of ${contender.rows} ${((median(values) * contender.rows) / 1000).toFixed(3)} ms`,
      );
    }
    const { rows: prepared } = await client.query<{ name: string; generic_plans: string; custom_plans: string }>(
      'SELECT name, generic_plans::text, custom_plans::text FROM pg_prepared_statements ORDER BY name',
    );
    console.log(
      `  plans (plan_cache_mode ${PLAN_CACHE}): ${prepared.map((p) => `${p.name} ${p.generic_plans} generic, ${p.custom_plans} custom`).join('; ')}`,
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
