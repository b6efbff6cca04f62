/**
 * `npm run bench -w @spectator/shared` (second part): the worst time of one ignore rule on a path
 * as long as rules are tested on (MAX_MATCHED_PATH_LENGTH, 2,048 characters), and of a whole list
 * on that path, on a 10 KB one and on one as long as the agent reads (256 KiB). Hostile patterns (counted repeats, nested stars, alternations, DFA blow-up shapes)
 * are generated up to the size limit, each is timed on hostile 10 KB paths, and the slowest is
 * printed with its ratio to an ordinary rule (`GET /assets/**`) on the same path. A whole list at
 * the list limit is timed too. The figures bound what one request can cost the agent, and one
 * template a view of the backend.
 */
import {
  isIgnored,
  MAX_MATCHED_PATH_LENGTH,
  MAX_PROGRAM_SIZE,
  MAX_RULES_PROGRAM_SIZE,
  parseIgnoreRules,
  type IgnoreRule,
} from '../src/ignore/rules';

declare const console: { log(...values: unknown[]): void };
declare const process: { cpuUsage(): { user: number; system: number } };

const PATH_LENGTH = MAX_MATCHED_PATH_LENGTH;

/** A deterministic generator, so that runs compare. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const next = random(15);
const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;

const atoms = ['.', '[ab]', '(?:a|b|/)', '\\w', '[^/]', 'a', '(?:\\w|a)', '(?:a|aa)', '[a-z/]'];
function piece(): string {
  const atom = pick(atoms);
  const n = Math.floor(next() * 400);
  return pick([`${atom}{0,${n}}`, `${atom}*`, `${atom}+`, `${atom}?`, `(?:${atom}${atom}*)+`, `.*a.{${n}}`, atom]);
}

/** A hostile rule at most MAX_PROGRAM_SIZE big: pieces added until the next would not fit. */
function hostileRule(): string | undefined {
  let body = '';
  let last: string | undefined;
  for (let tries = 0; tries < 60; tries++) {
    const candidate = body + piece();
    const tail = pick(['\\d', 'Z', 'b', '/x', '']);
    const entry = `GET /(${candidate}${tail})`;
    if (entry.length > 500) break;
    const { errors } = parseIgnoreRules([entry]);
    if (errors.length > 0) continue;
    body = candidate;
    last = entry;
  }
  return last;
}

const hostilePaths = (length: number): string[] => [
  '/' + 'a'.repeat(length - 1),
  '/' + Array.from({ length: length - 1 }, () => pick(['a', 'b', '/'])).join(''),
  '/' + 'ab/'.repeat(Math.ceil(length / 3)).slice(0, length - 1),
  '/' + Array.from({ length: length - 1 }, () => pick(['a', 'b', 'c', 'Z', '1', '/', '.'])).join(''),
];
const paths = hostilePaths(PATH_LENGTH);

/** CPU milliseconds of the slowest of `runs` tests of the rules against the path. */
function worstMs(rules: readonly IgnoreRule[], path: string, runs = 3): number {
  let worst = 0;
  for (let run = 0; run < runs; run++) {
    const started = process.cpuUsage();
    for (const rule of rules) rule.test(path);
    const used = process.cpuUsage();
    worst = Math.max(worst, (used.user - started.user + used.system - started.system) / 1000);
  }
  return worst;
}

/** The same for one request, as the agent tests it (`isIgnored`: every rule, the path normalized once). */
function worstRequestMs(rules: readonly IgnoreRule[], path: string, runs = 3): number {
  let worst = 0;
  for (let run = 0; run < runs; run++) {
    const started = process.cpuUsage();
    isIgnored(rules, 'GET', path);
    const used = process.cpuUsage();
    worst = Math.max(worst, (used.user - started.user + used.system - started.system) / 1000);
  }
  return worst;
}

const ordinary = parseIgnoreRules(['GET /assets/**']).rules;
const ordinaryMs = Math.max(...paths.map((path) => worstMs(ordinary, path, 20)));

const named = [
  'GET /(.{0,150}.{0,150}.{0,150}.{0,150}Z)',
  'GET (.*)a(.*)b(.*)c(.*)d',
  'GET /((a|aa)*b)',
  `GET /(.{0,${Math.floor(MAX_PROGRAM_SIZE / 2) - 2}})`,
  `GET /(.{0,${Math.floor(MAX_PROGRAM_SIZE / 6) - 1}}.{0,${Math.floor(MAX_PROGRAM_SIZE / 6) - 1}}.{0,${Math.floor(MAX_PROGRAM_SIZE / 6) - 1}}\\d)`,
];
const generated = Array.from({ length: 60 }, hostileRule).filter((entry): entry is string => entry !== undefined);
let worst = { ms: 0, entry: '', path: 0 };
for (const entry of [...named, ...generated]) {
  const rules = parseIgnoreRules([entry]).rules;
  paths.forEach((path, index) => {
    const ms = worstMs(rules, path);
    if (ms > worst.ms) worst = { ms, entry, path: index };
  });
}
console.log(
  `ignore rules: ${named.length + generated.length} hostile rules (programs up to ${MAX_PROGRAM_SIZE} instructions) on ${paths.length} paths of ${PATH_LENGTH} characters`,
);
console.log(
  `  worst single rule: ${worst.ms.toFixed(2)} ms (path ${worst.path}) ${worst.entry.slice(0, 100)}${worst.entry.length > 100 ? '…' : ''}`,
);
console.log(
  `  GET /assets/** on the same paths: ${ordinaryMs.toFixed(3)} ms; ratio ${(worst.ms / Math.max(ordinaryMs, 0.001)).toFixed(0)}`,
);

// A whole list at its limit: the largest generated rules, as many as fit.
const list = parseIgnoreRules([...generated].sort((a, b) => b.length - a.length).concat(generated)).rules;
for (const length of [PATH_LENGTH, 10_240, 256 * 1024]) {
  const listMs = Math.max(...hostilePaths(length).map((path) => worstRequestMs(list, path)));
  console.log(
    `  a list of ${list.length} hostile rules (at most ${MAX_RULES_PROGRAM_SIZE} instructions together): ${listMs.toFixed(2)} ms per ${length}-character path${length > MAX_MATCHED_PATH_LENGTH ? ' (longer than rules are tested on)' : ''}`,
  );
}
