/**
 * `npm run bench -w @spectator/shared`: what shaping a body costs next to parsing it.
 * For each payload, in one run and interleaved round by round, times `JSON.parse` of the bytes,
 * `inferShape` + `fingerprint` of the parsed value (shape and fingerprint, as on a first sighting)
 * and `shapeFingerprint` (the fingerprint alone in one walk, what the agent runs per sample), and
 * prints the medians and their ratios to parsing (≤ 1.0: shaping costs no more than parsing).
 */
import { fingerprint } from '../src/shape/fingerprint';
import { inferShape, shapeFingerprint } from '../src/shape/infer';
import { benchPayloads } from './payloads';

// The package compiles without Node's types (it must run in browsers); the bench needs only these.
declare const console: { log(...values: unknown[]): void };
declare const process: {
  env: Record<string, string | undefined>;
  version: string;
  cpuUsage(): { user: number; system: number };
};

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
/** Each timed batch runs about this long, so timer resolution does not matter. */
const BATCH_MS = 20;

/** Each contender runs this long before it is timed. */
const WARM_UP_MS = 300;

let sink = 0;

function warmUp(run: () => void): void {
  const started = Date.now();
  while (Date.now() - started < WARM_UP_MS) for (let i = 0; i < 10; i++) run();
}

/**
 * Milliseconds per run, as CPU time of this process: the machine is shared, and wall-clock time
 * would also count the time other processes held the CPU.
 */
function timeBatch(iterations: number, run: () => void): number {
  const started = process.cpuUsage();
  for (let i = 0; i < iterations; i++) run();
  const used = process.cpuUsage();
  return (used.user - started.user + used.system - started.system) / 1000 / iterations;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function format(ms: number): string {
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`;
}

interface Contender {
  name: string;
  run: () => void;
  times: number[];
}

function main(): void {
  console.log(
    `shape bench: ${ROUNDS} interleaved rounds, medians of CPU time, ratios to JSON.parse (node ${process.version})`,
  );
  console.log(
    [
      'payload'.padEnd(14),
      'bytes'.padStart(9),
      'JSON.parse'.padStart(12),
      'shape+fp'.padStart(12),
      'ratio'.padStart(7),
      'fused fp'.padStart(12),
      'ratio'.padStart(7),
    ].join(' '),
  );
  for (const payload of benchPayloads()) {
    const value: unknown = JSON.parse(payload.text);
    const contenders: Contender[] = [
      {
        name: 'JSON.parse',
        run: () => void (sink += (JSON.parse(payload.text) as object) === null ? 1 : 0),
        times: [],
      },
      { name: 'inferShape + fingerprint', run: () => void (sink += fingerprint(inferShape(value)).length), times: [] },
      { name: 'shapeFingerprint', run: () => void (sink += shapeFingerprint(value).length), times: [] },
    ];
    // Warm up each for WARM_UP_MS first: the CPU time counted includes the compiler's threads, and
    // with 20 warm-up calls the first payload (200 B) read about twice what it read when measured
    // again later in the same run.
    for (const contender of contenders) warmUp(contender.run);
    // Size the batches from the slowest.
    const iterations = Math.max(
      1,
      Math.round(BATCH_MS / Math.max(...contenders.map((contender) => timeBatch(20, contender.run)), 1e-4)),
    );
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate which goes first so none always runs on a warmer cache.
      for (let k = 0; k < contenders.length; k++) {
        const contender = contenders[(round + k) % contenders.length]!;
        contender.times.push(timeBatch(iterations, contender.run));
      }
    }
    const [parse, shape, fused] = contenders.map((contender) => median(contender.times)) as [number, number, number];
    console.log(
      [
        payload.name.padEnd(14),
        String(payload.text.length).padStart(9),
        format(parse).padStart(12),
        format(shape).padStart(12),
        (shape / parse).toFixed(2).padStart(7),
        format(fused).padStart(12),
        (fused / parse).toFixed(2).padStart(7),
      ].join(' '),
    );
  }
  if (sink === -1) console.log('unreachable');
}

main();
