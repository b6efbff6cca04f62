/**
 * A replica's Node CPU per 1,000 rows of its ingest path, the database left out (issue 20): what
 * a replica does between an agent's frame arriving and the batch statement's bytes leaving, on
 * the scale bench's batches (`scaleRows`: 40 rows over 300 endpoints, timings and consumers, as
 * agents send them). Per message: the frame's text, `parseAgentMessage`, `aggregateObservations`,
 * the runtime minutes and consumer days, the queued evidence's packed lists (`queuedEvidence`),
 * `writeBatchParameters`, node-postgres's parameter preparation and its Bind message (what
 * `queryPrepared` sends), and the ack's JSON.
 *
 * Contenders are builds (`BENCH_REPLICA_CPU_BUILDS`, comma-separated folders holding a compiled
 * `src/`, e.g. a copy of `dist/bench-build` made at another commit; default this build alone). Each
 * build runs in a process of its own (two builds loaded in one process measured whichever ran second
 * 20–30 % slower, session 29: the modules they share saw both builds' object shapes), the processes
 * in turn, A B A B …, BENCH_REPLICA_CPU_ROUNDS of each; a process warms up on BENCH_REPLICA_CPU_WARM
 * messages, then times BENCH_REPLICA_CPU_BLOCKS blocks of BENCH_REPLICA_CPU_MESSAGES messages.
 * Printed per contender and per process: CPU µs per 1,000 rows (process.cpuUsage, user + system; the
 * median of its blocks), and per 1,000 rows of its blocks the young-generation collections, their
 * pauses (wall time: load stretches them) and the bytes allocated (the heap's growth between
 * collections, `v8.GCProfiler`); per contender the median of its processes' medians and their
 * spread. Extra node flags for the processes: BENCH_REPLICA_CPU_NODE_FLAGS (space-separated, e.g.
 * `--cpu-prof`).
 *
 * Alone: `npx tsc -b ../shared && npx tsc -p bench && node dist/bench-build/bench/replica-cpu.bench.js`
 * in `backend/`. Timing: run it under the team's bench lock.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import v8 from 'node:v8';
import { serialize } from 'pg-protocol';
import type { AgentEnvironment, AgentMessage, BatchMessage, WireObservation } from '@spectator/shared';
import { loadAverage, median, positiveSetting as setting, scaleRows } from './harness';

const WARM = setting('BENCH_REPLICA_CPU_WARM', 2_000);
const MESSAGES = setting('BENCH_REPLICA_CPU_MESSAGES', 1_000);
const BLOCKS = setting('BENCH_REPLICA_CPU_BLOCKS', 5);
const ROUNDS = setting('BENCH_REPLICA_CPU_ROUNDS', 2);
/** Set in a contender's own process: its build's folder. */
const CHILD = 'BENCH_REPLICA_CPU_CHILD';
/**
 * Messages kept alive after they are handled (their objects, statement parameters and Bind
 * message), as a replica holds the MAX_MESSAGES_HANDLED messages it handles at once (while their
 * statements wait for and run on the database): what every young-generation collection copies.
 */
const LIVE = setting('BENCH_REPLICA_CPU_LIVE', 20);
/** Distinct messages made (the frames are reused in turn). */
const DISTINCT = 500;

/** The path of one build, as functions loaded from its compiled `src/`. */
interface Contender {
  name: string;
  /** Handles one frame as a replica does, minus the database; @returns what it made and the rows it carried. */
  handle(frame: Buffer): Promise<{ made: unknown; rows: number }>;
}

/** Loads a module of a build by its path (a contender's build is chosen at run time). */
const loadModule = createRequire(__filename);
/** node-postgres's parameter preparation, as it maps a query's values into its Bind message. */
const { prepareValue } = loadModule('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** The functions of one build's ingest path this bench runs. */
interface IngestPath {
  parseAgentMessage(text: string): AgentMessage;
  aggregateObservations(observations: readonly WireObservation[]): unknown[];
  /** The runtime minutes (older builds: as objects, which `queuedEvidence` took until session 30). */
  runtimeMinutes?(batch: BatchMessage): unknown[];
  packedRuntimeMinutes?(batch: BatchMessage): string;
  consumerDays(batch: BatchMessage): unknown[];
  /** The consumer days already packed, which `queuedEvidence` takes since session 22 (older builds: the days). */
  packedConsumerDays?(batch: BatchMessage): string;
  writeBatchParameters(header: unknown, rows: readonly unknown[]): unknown[];
  EvidenceService: new (...args: unknown[]) => {
    queuedEvidence(projectId: string, environment: AgentEnvironment, ...lists: unknown[]): Promise<unknown>;
  };
}

/** The contender of the build in `root` (a folder holding `src/`). */
function contender(root: string): Contender {
  const load = (file: string): IngestPath => loadModule(path.join(root, 'src', file)) as IngestPath;
  const { parseAgentMessage } = load('ingest/wire-validation.js');
  const { aggregateObservations } = load('ingest/ingest.service.js');
  const { runtimeMinutes, packedRuntimeMinutes } = load('runtime/runtime.service.js');
  const minutesOf = (packedRuntimeMinutes ?? runtimeMinutes) as (batch: BatchMessage) => unknown;
  const { consumerDays, packedConsumerDays } = load('consumers/consumers.service.js');
  const consumersOf = packedConsumerDays ?? consumerDays;
  const { writeBatchParameters } = load('captures/batch-statement.js');
  const { EvidenceService } = load('evidence/evidence.service.js');
  // The row's id as the service keeps it after its first batch (a read of the database before).
  const rowId = randomUUID();
  const evidence = new EvidenceService({ pool: null, rowId: () => Promise.resolve(rowId) }, null, null, null);
  const environment: AgentEnvironment = { kind: 'production', build: 'build-100' };
  const projectId = randomUUID();
  return {
    name: root,
    async handle(frame: Buffer): Promise<{ made: unknown; rows: number }> {
      const message = parseAgentMessage(frame.toString('utf8'));
      if (message.type !== 'batch') throw new Error(`not a batch: ${message.type}`);
      const batch: BatchMessage = message;
      const rows = aggregateObservations(batch.observations);
      const shapes = Object.entries(batch.shapes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const queued = await evidence.queuedEvidence(projectId, environment, rows, minutesOf(batch), consumersOf(batch));
      const parameters = writeBatchParameters(
        {
          batchId: batch.batchId,
          projectId,
          captureId: batch.captureId,
          observations: batch.observations.length,
          shapes,
          maxEndpoints: 20_000,
          evidence: queued,
        },
        rows,
      );
      const bind = serialize.bind({ statement: 'write_batch', values: parameters, valueMapper: prepareValue });
      const ack = JSON.stringify({ type: 'ack', batchId: batch.batchId });
      if (bind.length === 0 || ack.length === 0) throw new Error('nothing written');
      return { made: [batch, rows, parameters, bind], rows: batch.observations.length };
    },
  };
}

/** The scale bench's batches as agents send them: JSON text frames. */
function frames(): Buffer[] {
  const captureId = randomUUID();
  const made: Buffer[] = [];
  for (let seed = 1; seed <= DISTINCT; seed++) {
    const observations: WireObservation[] = scaleRows(seed * 7_919, 40, 300);
    made.push(
      Buffer.from(JSON.stringify({ type: 'batch', batchId: randomUUID(), captureId, shapes: {}, observations })),
    );
  }
  return made;
}

/** What one block measured: CPU, and the young generation's work, each per 1,000 rows. */
interface Measured {
  cpuUs: number;
  scavenges: number;
  pauseMs: number;
  allocatedMb: number;
}

/** `count` messages through `c`, measured (`Measured`). */
async function block(c: Contender, all: readonly Buffer[], start: number, count: number): Promise<Measured> {
  const live: unknown[] = new Array<unknown>(LIVE);
  const profiler = new v8.GCProfiler();
  profiler.start();
  const heapBefore = v8.getHeapStatistics().used_heap_size;
  const before = process.cpuUsage();
  let rows = 0;
  for (let i = 0; i < count; i++) {
    const handled = await c.handle(all[(start + i) % all.length] as Buffer);
    rows += handled.rows;
    live[i % LIVE] = handled.made;
  }
  const cpu = process.cpuUsage(before);
  const heapAfter = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  // Allocated: what the heap grew by between collections (each collection's before, less the last one's after).
  let allocated = 0;
  let from = heapBefore;
  let scavenges = 0;
  let pauseUs = 0;
  for (const gc of statistics) {
    allocated += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - from);
    from = gc.afterGC.heapStatistics.usedHeapSize;
    if (gc.gcType === 'Scavenge') {
      scavenges++;
      pauseUs += gc.cost;
    }
  }
  allocated += Math.max(0, heapAfter - from);
  const perThousand = 1000 / rows;
  return {
    cpuUs: (cpu.user + cpu.system) * perThousand,
    scavenges: scavenges * perThousand,
    pauseMs: (pauseUs / 1000) * perThousand,
    allocatedMb: (allocated / 1e6) * perThousand,
  };
}

/** In a contender's own process: warms up, times the blocks, and prints them as one JSON line. */
async function child(root: string): Promise<void> {
  const c = contender(root);
  const all = frames();
  await block(c, all, 0, WARM);
  const blocks: Measured[] = [];
  for (let b = 0; b < BLOCKS; b++) blocks.push(await block(c, all, b * MESSAGES, MESSAGES));
  const bytes = all.reduce((sum, f) => sum + f.length, 0) / all.length;
  console.log(JSON.stringify({ blocks, bytes }));
}

/** Runs `root`'s contender in a process of its own; @returns its blocks' figures, the median of each. */
function inItsOwnProcess(root: string): Promise<{ measured: Measured; bytes: number }> {
  const flags = (process.env.BENCH_REPLICA_CPU_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, [...flags, __filename], {
      env: { ...process.env, [CHILD]: root },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    process_.stdout.setEncoding('utf8');
    process_.stdout.on('data', (chunk: string) => (out += chunk));
    process_.stdout.on('error', reject);
    process_.on('error', reject);
    process_.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${root}'s process ended with ${String(code)}`));
      const { blocks, bytes } = JSON.parse(out) as { blocks: Measured[]; bytes: number };
      const of = (field: keyof Measured): number => median(blocks.map((m) => m[field]));
      resolve({
        measured: {
          cpuUs: of('cpuUs'),
          scavenges: of('scavenges'),
          pauseMs: of('pauseMs'),
          allocatedMb: of('allocatedMb'),
        },
        bytes,
      });
    });
  });
}

async function main(): Promise<void> {
  const own = process.env[CHILD];
  if (own !== undefined) return child(own);
  const builds = (process.env.BENCH_REPLICA_CPU_BUILDS ?? path.join(__dirname, '..'))
    .split(',')
    .map((root) => path.resolve(root.trim()));
  const results = builds.map(() => [] as Measured[]);
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, root] of builds.entries()) {
      const run = await inItsOwnProcess(root);
      (results[i] as Measured[]).push(run.measured);
      bytes = run.bytes;
    }
  console.log(
    `replica CPU per 1,000 rows, database left out: per contender ${ROUNDS} processes in turn (A B A B …), each ${BLOCKS} blocks of ${MESSAGES} messages (40 rows, ${(bytes / 1024).toFixed(1)} KiB of JSON each) after ${WARM} warm-up messages, ${LIVE} kept alive; per process the median of its blocks`,
  );
  for (const [i, root] of builds.entries()) {
    const runs = results[i] as Measured[];
    const cpu = runs.map((m) => m.cpuUs);
    const show = (field: keyof Measured, digits: number): string =>
      runs.map((m) => m[field].toFixed(digits)).join(' / ');
    console.log(
      `  ${root}: CPU median ${median(cpu).toFixed(0)} µs (processes ${show('cpuUs', 0)}); scavenges ${show('scavenges', 2)}, their pauses (wall) ${show('pauseMs', 1)} ms, allocated ${show('allocatedMb', 2)} MB`,
    );
  }
  console.log(`  load average ${loadAverage()}`);
}
void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
