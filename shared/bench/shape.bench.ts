/**
 * `npm run bench -w @spectator/shared`: what shaping a body costs next to parsing it.
 * For each payload, in one run and interleaved round by round, times `JSON.parse` of the bytes
 * and `inferShape` + `fingerprint` of the parsed value (what the agent does after parsing), and
 * prints the medians and their ratio (shape ÷ parse; ≤ 1.0 means shaping costs no more than parsing).
 */
import { fingerprint } from '../src/shape/fingerprint';
import { inferShape } from '../src/shape/infer';
import { benchPayloads } from './payloads';

// The package compiles without Node's types (it must run in browsers); the bench needs only these.
declare const console: { log(...values: unknown[]): void };
declare const process: { env: Record<string, string | undefined>; version: string; cpuUsage(): { user: number; system: number } };

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 41);
/** Each timed batch runs about this long, so timer resolution does not matter. */
const BATCH_MS = 20;

let sink = 0;

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

function main(): void {
  console.log(`shape bench: inferShape + fingerprint vs JSON.parse, ${ROUNDS} interleaved rounds, medians of CPU time (node ${process.version})`);
  console.log(['payload'.padEnd(14), 'bytes'.padStart(9), 'JSON.parse'.padStart(12), 'shape+fp'.padStart(12), 'ratio'.padStart(7)].join(' '));
  for (const payload of benchPayloads()) {
    const value: unknown = JSON.parse(payload.text);
    const parse = (): void => {
      sink += (JSON.parse(payload.text) as object) === null ? 1 : 0;
    };
    const shape = (): void => {
      sink += fingerprint(inferShape(value)).length;
    };
    // Warm up both, then size the batches from the warm-up time.
    const iterations = Math.max(1, Math.round(BATCH_MS / Math.max(timeBatch(20, parse), timeBatch(20, shape), 1e-4)));
    const parseTimes: number[] = [];
    const shapeTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which goes first so neither always runs on a warmer cache.
      if (round % 2 === 0) {
        parseTimes.push(timeBatch(iterations, parse));
        shapeTimes.push(timeBatch(iterations, shape));
      } else {
        shapeTimes.push(timeBatch(iterations, shape));
        parseTimes.push(timeBatch(iterations, parse));
      }
    }
    const parseMedian = median(parseTimes);
    const shapeMedian = median(shapeTimes);
    console.log(
      [payload.name.padEnd(14), String(payload.text.length).padStart(9), format(parseMedian).padStart(12), format(shapeMedian).padStart(12), (shapeMedian / parseMedian).toFixed(2).padStart(7)].join(' '),
    );
  }
  if (sink === -1) console.log('unreachable');
}

main();
