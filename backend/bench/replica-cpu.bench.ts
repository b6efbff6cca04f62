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
 * `src/`, e.g. a copy of `dist/bench-build` made at another commit; default this build alone),
 * all loaded in this process and run alternately, block by block (A B A B …, after
 * BENCH_REPLICA_CPU_WARM messages each). Printed: CPU µs per 1,000 rows (process.cpuUsage, user +
 * system) per contender, the median of BENCH_REPLICA_CPU_BLOCKS blocks of BENCH_REPLICA_CPU_MESSAGES
 * messages, with the spread. Run node with `--trace-gc` or `--cpu-prof` to see where it goes.
 *
 * Alone: `npx tsc -b ../shared && npx tsc -p bench && node dist/bench-build/bench/replica-cpu.bench.js`
 * in `backend/`. Timing: run it under the team's bench lock.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { serialize } from 'pg-protocol';
import type { AgentEnvironment, AgentMessage, BatchMessage, WireObservation } from '@spectator/shared';
import { loadAverage, median, positiveSetting as setting, scaleRows } from './harness';

const WARM = setting('BENCH_REPLICA_CPU_WARM', 2_000);
const MESSAGES = setting('BENCH_REPLICA_CPU_MESSAGES', 1_000);
const BLOCKS = setting('BENCH_REPLICA_CPU_BLOCKS', 9);
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
  runtimeMinutes(batch: BatchMessage): unknown[];
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
  const { runtimeMinutes } = load('runtime/runtime.service.js');
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
      const queued = await evidence.queuedEvidence(
        projectId,
        environment,
        rows,
        runtimeMinutes(batch),
        consumersOf(batch),
      );
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

/** CPU µs (user + system) per 1,000 rows of `count` messages through `c`. */
async function block(c: Contender, all: readonly Buffer[], start: number, count: number): Promise<number> {
  const live: unknown[] = new Array<unknown>(LIVE);
  const before = process.cpuUsage();
  let rows = 0;
  for (let i = 0; i < count; i++) {
    const handled = await c.handle(all[(start + i) % all.length] as Buffer);
    rows += handled.rows;
    live[i % LIVE] = handled.made;
  }
  const used = process.cpuUsage(before);
  return ((used.user + used.system) * 1000) / rows;
}

async function main(): Promise<void> {
  const builds = (process.env.BENCH_REPLICA_CPU_BUILDS ?? path.join(__dirname, '..'))
    .split(',')
    .map((root) => path.resolve(root.trim()));
  const contenders = builds.map(contender);
  const all = frames();
  const bytes = all.reduce((sum, f) => sum + f.length, 0) / all.length;
  for (const c of contenders) await block(c, all, 0, WARM);
  const results = contenders.map(() => [] as number[]);
  for (let b = 0; b < BLOCKS; b++)
    for (const [i, c] of contenders.entries())
      (results[i] as number[]).push(await block(c, all, b * MESSAGES, MESSAGES));
  console.log(
    `replica CPU per 1,000 rows, database left out: ${BLOCKS} blocks of ${MESSAGES} messages (40 rows, ${(bytes / 1024).toFixed(1)} KiB of JSON each) per contender, alternated after ${WARM} warm-up messages, ${LIVE} kept alive`,
  );
  for (const [i, c] of contenders.entries()) {
    const values = results[i] as number[];
    console.log(
      `  ${c.name}: median ${median(values).toFixed(0)} µs (min ${Math.min(...values).toFixed(0)}, max ${Math.max(...values).toFixed(0)})`,
    );
  }
  console.log(`  load average ${loadAverage()}`);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
