import {
  type ApiError,
  type BlastRadiusResponse,
  type CiRuntimeResponse,
  type CiSummaryResponse,
  type CompareEndpoint,
  DEFAULT_CONSUMER_DAYS,
  DEFAULT_PRODUCTION_DAYS,
  DEFAULT_REGRESSION_THRESHOLDS,
  MAX_CONSUMER_DAYS,
  MAX_PRODUCTION_DAYS,
  type ErrorRateTest,
  LatencyHistogram,
  type LatencyTest,
  type RegressionThresholds,
  regressionTests,
} from '@spectator/shared';
import { appendFile, writeFile } from 'node:fs/promises';
import { ConfigError, pullRequestFromCi } from './config';

/** What the CI gate can fail on. */
export const FAIL_ON = [
  'undocumented',
  'breaking',
  'diffs',
  'production-breaking',
  'latency-regression',
  'error-rate',
  'breaking-with-consumers',
] as const;
export type FailOn = (typeof FAIL_ON)[number];
/** The --fail-on items judged on runtime evidence (`GET /ci/{pr}/runtime`). */
const RUNTIME_FAIL_ON: readonly FailOn[] = ['latency-regression', 'error-rate'];

/** `spectator-agent check` options. */
export interface CheckOptions {
  /** Backend base URL (http(s)://; ws(s):// is accepted and read as http(s)://). */
  backend: string;
  token: string;
  project: string;
  pullRequest: string;
  failOn: FailOn[];
  /** Also write the report as Markdown to this file (for a pull request comment), or null. */
  markdown: string | null;
  /** What latency-regression and error-rate allow (shared/src/runtime/regression.ts). */
  thresholds: RegressionThresholds;
  /** The window of `breaking-with-consumers`: production's calls in the last N days. Default 30. */
  consumerDays: number;
  /** The window of production's runtime for latency-regression and error-rate, in days; null: the backend's default (7). */
  productionDays: number | null;
  /** `breaking-with-consumers` judges the consumers of this production build only (its name in the matrix); null: every build. */
  consumersBuild: string | null;
}

/** Characters of a build name at most, as the backend keeps them. */
const MAX_BUILD_LENGTH = 200;

/** Exit codes: 0 passed, 1 the gate failed, 2 the check could not run (options, backend). */
export const CHECK_EXIT = { passed: 0, failed: 1, error: 2 } as const;

export const CHECK_HELP = `Usage: spectator-agent check --backend <url> --token <token> --project <slug> --pr <number> [--fail-on <list>]

Asks the backend about a pull request's CI evidence (its captures at the newest commit) and fails
when it finds what --fail-on names. It also compares the versions the pull request's CI runs
showed with the versions running in production: what merging it changes for production's clients.
Exit code 0: passed, 1: failed, 2: could not check.

  --backend <url>     Backend base URL (SPECTATOR_BACKEND_URL)
  --token <token>     A read token of the project (SPECTATOR_TOKEN)
  --project <slug>    Project slug (SPECTATOR_PROJECT)
  --pr <number>       Pull request (SPECTATOR_PR, else the usual CI variables)
  --fail-on <list>    Comma-separated: undocumented, breaking (a breaking diff against the
                      documentation), diffs (any diff), production-breaking (a version change that
                      breaks production's clients), latency-regression (p95 above production's
                      for the same endpoint and version), error-rate (error rate above
                      production's), breaking-with-consumers (a breaking change of a part
                      production's consumers called in the last --consumer-days days; they are
                      named by label or pseudonym). Default undocumented,breaking.
  --consumer-days <n> The window of breaking-with-consumers, 1-400 days (SPECTATOR_CONSUMER_DAYS).
                      Default 30.
  --consumers-build <name>
                      Judge breaking-with-consumers on the consumers of this production build
                      only, as the versions matrix names it (SPECTATOR_CONSUMERS_BUILD). Default:
                      every production build.
  --production-days <n>
                      How many days of production's runtime latency-regression and error-rate
                      compare with, 1-${MAX_PRODUCTION_DAYS} (SPECTATOR_PRODUCTION_DAYS). Default ${DEFAULT_PRODUCTION_DAYS}.
  --latency-threshold <percent>
                      The p95 increase latency-regression allows (default 35)
  --latency-floor <ms>
                      ...and at least this many milliseconds more (default 5)
  --error-rate-threshold <points>
                      The error rate increase error-rate allows, percentage points (default 1)
  --min-requests <n>  Requests each side needs for an endpoint to be judged (default 30)
  --significance <p>  The chance at most of failing a pull request that changed nothing (default
                      0.01). See docs/ci.md for the tests.
  --markdown <path>   Also write the report as Markdown to this file, e.g. to post as a pull request
                      comment (SPECTATOR_CHECK_MARKDOWN). On GitHub Actions the Markdown report is
                      added to the job summary ($GITHUB_STEP_SUMMARY) as well.
`;

const FLAGS: Record<string, keyof CheckOptions> = {
  '--backend': 'backend',
  '--token': 'token',
  '--project': 'project',
  '--pr': 'pullRequest',
  '--fail-on': 'failOn',
  '--markdown': 'markdown',
  '--consumer-days': 'consumerDays',
  '--consumers-build': 'consumersBuild',
  '--production-days': 'productionDays',
};

/** Numeric options of the runtime gate: flag, the threshold it sets, how the value maps, its range. */
const THRESHOLD_FLAGS: Record<
  string,
  { key: keyof RegressionThresholds; scale: number; min: number; max: number; integer?: boolean }
> = {
  '--latency-threshold': { key: 'latencyIncrease', scale: 0.01, min: 0, max: 10_000 },
  '--latency-floor': { key: 'latencyFloorMs', scale: 1, min: 0, max: 3_600_000 },
  '--error-rate-threshold': { key: 'errorRateIncrease', scale: 0.01, min: 0, max: 100 },
  '--min-requests': { key: 'minRequests', scale: 1, min: 1, max: 1e9, integer: true },
  '--significance': { key: 'significance', scale: 1, min: 1e-12, max: 0.5 },
};

/**
 * Parses `check` options (flag, then environment variable). `--flag value` and `--flag=value`.
 * @throws ConfigError naming every problem.
 */
export function parseCheckOptions(argv: readonly string[], env: NodeJS.ProcessEnv): CheckOptions {
  const given: Partial<Record<string, string>> = {};
  const problems: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const key = FLAGS[flag] ?? (THRESHOLD_FLAGS[flag] ? flag : undefined);
    if (key === undefined) {
      problems.push(`unknown option ${flag}`);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') problems.push(`${flag} needs a value`);
    else given[key] = value;
  }
  const thresholds: RegressionThresholds = { ...DEFAULT_REGRESSION_THRESHOLDS };
  for (const [flag, { key, scale, min, max, integer }] of Object.entries(THRESHOLD_FLAGS)) {
    const text = given[flag];
    if (text === undefined) continue;
    const value = Number(text);
    if (
      text.trim() === '' ||
      !Number.isFinite(value) ||
      value < min ||
      value > max ||
      (integer && !Number.isInteger(value))
    )
      problems.push(`${flag} "${text}" must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    else thresholds[key] = value * scale;
  }
  const backend = given.backend ?? env.SPECTATOR_BACKEND_URL;
  const token = given.token ?? env.SPECTATOR_TOKEN;
  const project = given.project ?? env.SPECTATOR_PROJECT;
  const pullRequest = given.pullRequest ?? env.SPECTATOR_PR ?? pullRequestFromCi(env);
  let base = '';
  if (!backend) problems.push('--backend (or SPECTATOR_BACKEND_URL) is required');
  else {
    try {
      const url = new URL(backend);
      if (!['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol)) throw new Error('scheme');
      url.protocol = url.protocol === 'wss:' ? 'https:' : url.protocol === 'ws:' ? 'http:' : url.protocol;
      base = url.toString().replace(/\/+$/, '');
    } catch {
      problems.push(`--backend "${backend}" must be an http(s):// URL`);
    }
  }
  if (!token) problems.push('--token (or SPECTATOR_TOKEN) is required');
  if (!project) problems.push('--project (or SPECTATOR_PROJECT) is required');
  if (!pullRequest) problems.push('--pr (or SPECTATOR_PR) is required outside a pull request build');
  else if (!/^[A-Za-z0-9._-]{1,200}$/.test(pullRequest))
    problems.push(`--pr "${pullRequest}" is not a pull request number`);
  const failOn = (given.failOn ?? 'undocumented,breaking')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of failOn)
    if (!(FAIL_ON as readonly string[]).includes(item))
      problems.push(`--fail-on "${item}" must be one of ${FAIL_ON.join(', ')}`);
  const daysText = given.consumerDays ?? env.SPECTATOR_CONSUMER_DAYS ?? String(DEFAULT_CONSUMER_DAYS);
  const consumerDays = Number(daysText);
  if (!/^\d+$/.test(daysText) || consumerDays < 1 || consumerDays > MAX_CONSUMER_DAYS)
    problems.push(`--consumer-days "${daysText}" must be a number of days from 1 to ${MAX_CONSUMER_DAYS}`);
  const productionText = given.productionDays ?? env.SPECTATOR_PRODUCTION_DAYS;
  const productionDays = productionText === undefined || productionText === '' ? null : Number(productionText);
  if (
    productionDays !== null &&
    (!/^\d+$/.test(productionText as string) || productionDays < 1 || productionDays > MAX_PRODUCTION_DAYS)
  )
    problems.push(
      `--production-days "${productionText}" must be a whole number of days from 1 to ${MAX_PRODUCTION_DAYS}`,
    );
  const consumersBuild = given.consumersBuild ?? (env.SPECTATOR_CONSUMERS_BUILD || null);
  if (consumersBuild !== null && consumersBuild.length > MAX_BUILD_LENGTH)
    problems.push(`--consumers-build must be a build name of at most ${MAX_BUILD_LENGTH} characters`);
  if (problems.length > 0) throw new ConfigError(problems);
  const markdown = given.markdown ?? (env.SPECTATOR_CHECK_MARKDOWN || null);
  return {
    backend: base,
    token: token as string,
    project: project as string,
    pullRequest: pullRequest as string,
    failOn: failOn as FailOn[],
    markdown,
    thresholds,
    consumerDays,
    productionDays,
    consumersBuild,
  };
}

/** One endpoint's runtime in the pull request against production's for the same version, with the gate's two tests. */
export interface RuntimeVerdict {
  method: string;
  path: string;
  version: string;
  requests: number;
  /** Production's requests at this version; null when production has none. */
  productionRequests: number | null;
  /** Null when production has no figures at this version. */
  latency: LatencyTest | null;
  errorRate: ErrorRateTest | null;
}

/**
 * The runtime tests of every endpoint the pull request's CI runs called (shared/src/runtime/regression.ts),
 * on time to last byte: what a client waits for.
 */
export function judgeRuntime(runtime: CiRuntimeResponse, thresholds: RegressionThresholds): RuntimeVerdict[] {
  const sides = runtime.endpoints.map((e) => ({
    pullRequest: { ...e.pullRequest, latency: LatencyHistogram.fromWire(e.pullRequest.ttlb) },
    production:
      e.production === null ? null : { ...e.production, latency: LatencyHistogram.fromWire(e.production.ttlb) },
  }));
  const tests = regressionTests(sides, thresholds);
  return runtime.endpoints.map((e, i) => ({
    method: e.method,
    path: e.path,
    version: e.version,
    requests: e.pullRequest.requests,
    productionRequests: e.production?.requests ?? null,
    latency: tests[i]?.latency ?? null,
    errorRate: tests[i]?.errorRate ?? null,
  }));
}

/** Why the gate fails (empty: it passes), by the --fail-on list. */
function failureReasons(
  summary: CiSummaryResponse,
  failOn: readonly FailOn[],
  runtime: readonly RuntimeVerdict[] | null,
): string[] {
  const reasons: string[] = [];
  if (summary.undocumented.length > 0 && failOn.includes('undocumented'))
    reasons.push(`${summary.undocumented.length} undocumented endpoint(s)`);
  const breaking = summary.diffs.filter((d) => d.breaking).length;
  if (failOn.includes('diffs') && summary.diffs.length > 0) reasons.push(`${summary.diffs.length} diff(s)`);
  else if (failOn.includes('breaking') && breaking > 0) reasons.push(`${breaking} breaking diff(s)`);
  const forProduction = productionChanges(summary).filter((e) => e.breaking).length;
  if (failOn.includes('production-breaking') && forProduction > 0)
    reasons.push(`${forProduction} endpoint(s) breaking for production's clients`);
  const slower = (runtime ?? []).filter((v) => v.latency?.regressed).length;
  if (failOn.includes('latency-regression') && slower > 0)
    reasons.push(`${slower} endpoint(s) slower than production (p95)`);
  const failing = (runtime ?? []).filter((v) => v.errorRate?.regressed).length;
  if (failOn.includes('error-rate') && failing > 0)
    reasons.push(`${failing} endpoint(s) with a higher error rate than production`);
  const radius = summary.consumers;
  if (failOn.includes('breaking-with-consumers') && radius && (radius.consumers.length > 0 || radius.otherCalls > 0))
    reasons.push(
      `${radius.consumers.length} production consumer(s)${ofBuild(radius)} used a broken part in the last ${radius.days} days: ${consumerNames(radius)}`,
    );
  return reasons;
}

/** ` of build p-2` when the blast radius is of one production build, else nothing. */
const ofBuild = (radius: BlastRadiusResponse): string => (radius.build == null ? '' : ` of build ${radius.build}`);

/** The affected consumers by label, else pseudonym, busiest first; and the unnamed rest as a count of calls. */
function consumerNames(radius: BlastRadiusResponse): string {
  const names = radius.consumers.map((c) => c.label ?? c.consumer);
  if (radius.otherCalls > 0) names.push(`${radius.otherCalls} call(s) of consumers past an agent's bound`);
  return names.join(', ');
}

/** Who the breaking changes break in production (a backend older than this agent sends nothing). */
function consumerLines(radius: BlastRadiusResponse | undefined): string[] {
  if (!radius || radius.parts.length === 0) return [];
  const lines = [`  Production consumers${ofBuild(radius)} of the broken parts (last ${radius.days} days):`];
  for (const part of radius.parts) {
    const who =
      part.consumers.length === 0
        ? 'no consumer'
        : part.consumers
            .map(
              (c) => `${c.label ?? c.consumer} (${c.calls} call(s), ${Math.round(c.share * 100)}%, last ${c.lastCall})`,
            )
            .join(', ');
    lines.push(
      `    ${part.method} ${part.path} ${part.status ?? 'any status'}: ${who}${part.otherCalls > 0 ? `; ${part.otherCalls} call(s) of unnamed consumers past a bound` : ''} (${part.calls} call(s) counted)`,
    );
  }
  return lines;
}

const ms = (value: number | null): string =>
  value === null ? 'n/a' : `${value.toFixed(value < 10 ? 2 : value < 1000 ? 1 : 0)} ms`;
const percent = (rate: number): string => `${(rate * 100).toFixed(rate !== 0 && rate < 0.001 ? 3 : 1)}%`;
const probability = (p: number): string => (p >= 0.001 ? p.toPrecision(2) : p.toExponential(1));

/** The p95 figures and the latency test in words: `REGRESSED: 60 of 60 above 38.05 ms (…), p = 1e-78 ≤ 0.0025`. */
function latencyWords(test: LatencyTest): string {
  if (test.notJudged !== null) return `not judged: ${test.notJudged}`;
  return `${test.regressed ? 'REGRESSED' : 'ok'}: ${test.above} of ${test.requests} above ${ms(test.boundary)} (production's p95 at most ${ms(test.productionBound)}), p = ${probability(test.pValue)} ${test.regressed ? '≤' : '>'} ${probability(test.alpha / 2)}`;
}

function errorWords(test: ErrorRateTest): string {
  if (test.notJudged !== null) return `not judged: ${test.notJudged}`;
  return `${test.regressed ? 'REGRESSED' : 'ok'}: ${percent(test.pullRequestRate)} against at most ${percent(test.allowedRate)} allowed, p = ${probability(test.pValue)} ${test.regressed ? '≤' : '>'} ${probability(test.alpha / 2)}`;
}

/** A test the gate could not make: production has not run the endpoint's version in its window. */
const NOT_IN_PRODUCTION = 'not judged: not in production';

/** `p95 57.0 ms vs 5.20 ms, errors 0.0% vs 0.0% (100 vs 300 requests)`, or why production has no figures. */
function runtimeFigures(v: RuntimeVerdict): string {
  if (v.latency === null || v.errorRate === null)
    return `${v.requests} request(s); not judged: production has no requests at ${v.version}`;
  return `p95 ${ms(v.latency.pullRequestP95)} vs ${ms(v.latency.productionP95)}, errors ${percent(v.errorRate.pullRequestRate)} vs ${percent(v.errorRate.productionRate)} (${v.requests} vs ${v.productionRequests} requests)`;
}

/** The endpoints whose version differs from production's, as the backend chose them (a backend older than this agent sends none). */
function productionChanges(summary: CiSummaryResponse): CompareEndpoint[] {
  return (summary.againstProduction as CiSummaryResponse['againstProduction'] | undefined)?.endpoints ?? [];
}

/** How an endpoint's version moves from production to the pull request: `1.1 → 2.0`, `N/A → 1.0 (not in production yet)`. */
const versionMove = (e: CompareEndpoint): string =>
  `${e.from.version} → ${e.to.version}${e.status === 'only in to' ? ' (not in production yet)' : ''}`;

/** One change of a diff in words: `removed response 200 $.name (breaking)`. */
const describeChange = (c: CiSummaryResponse['diffs'][number]['changes'][number]): string =>
  `${c.change} ${c.in}${c.status === undefined ? '' : ` ${c.status}`} ${c.at}${c.breaking ? ' (breaking)' : ''}`;

/** The readable summary of a pull request's evidence and whether the gate passes. */
export function judgeCiSummary(
  summary: CiSummaryResponse,
  failOn: readonly FailOn[],
  runtime: readonly RuntimeVerdict[] | null = null,
): { passed: boolean; reasons: string[]; text: string } {
  const lines: string[] = [
    `Spectator CI check for pull request ${summary.pullRequest}${summary.commit ? ` at ${summary.commit}` : ''} (${summary.captures.length} capture(s))`,
  ];
  if (summary.undocumented.length > 0) {
    lines.push(`  Undocumented endpoints (${summary.undocumented.length}):`);
    for (const u of summary.undocumented) lines.push(`    ${u.method} ${u.path}  (${u.interactions} interaction(s))`);
  }
  if (summary.diffs.length > 0) {
    lines.push(`  Diffs against the documentation (${summary.diffs.length}):`);
    for (const d of summary.diffs) {
      lines.push(`    ${d.method} ${d.path}  documented ${d.version}${d.breaking ? '  BREAKING' : ''}`);
      if (d.since) lines.push(`      ${d.since}`);
      for (const c of d.changes) lines.push(`      - ${describeChange(c)}`);
    }
  }
  if (summary.undocumented.length === 0 && summary.diffs.length === 0)
    lines.push('  Every observed endpoint is documented and matches its documentation.');
  const forProduction = productionChanges(summary);
  if (forProduction.length > 0) {
    lines.push(`  Against production (${forProduction.length}):`);
    for (const e of forProduction) {
      lines.push(`    ${e.method} ${e.path}  ${versionMove(e)}${e.breaking ? '  BREAKING' : ''}`);
      for (const c of e.changes) lines.push(`      - ${describeChange(c)}`);
    }
  }
  if (runtime !== null) {
    lines.push(`  Runtime against production, same endpoint and version (${runtime.length}):`);
    for (const v of runtime) {
      lines.push(`    ${v.method} ${v.path}  ${v.version}  ${runtimeFigures(v)}`);
      if (v.latency) lines.push(`      - latency ${latencyWords(v.latency)}`);
      if (v.errorRate) lines.push(`      - error rate ${errorWords(v.errorRate)}`);
    }
  }
  lines.push(...consumerLines(summary.consumers));
  const reasons = failureReasons(summary, failOn, runtime);
  lines.push(reasons.length === 0 ? 'PASSED' : `FAILED: ${reasons.join(', ')} (--fail-on ${failOn.join(',')})`);
  return { passed: reasons.length === 0, reasons, text: `${lines.join('\n')}\n` };
}

/** Text shown as inline code in a Markdown table: no backticks, pipes escaped, one line. */
const code = (text: string): string => `\`${text.replace(/`/g, "'").replace(/\|/g, '\\|').replace(/\s+/g, ' ')}\``;

/**
 * The report as Markdown (a job summary, a pull request comment): the verdict, tables of
 * undocumented endpoints and of diffs with their changes, and a link to review the newest capture
 * in the dashboard. Names and types only, like everything Spectator keeps.
 */
export function markdownReport(
  summary: CiSummaryResponse,
  failOn: readonly FailOn[],
  links: { backend: string; project: string },
  runtime: readonly RuntimeVerdict[] | null = null,
): string {
  const reasons = failureReasons(summary, failOn, runtime);
  const out: string[] = [
    `### Spectator API check for pull request #${summary.pullRequest}: ${reasons.length === 0 ? 'passed' : 'failed'}`,
    '',
    `${summary.commit ? `Commit ${code(summary.commit.slice(0, 12))} · ` : ''}${summary.captures.length} capture(s) · fails on ${failOn.join(', ')}`,
    '',
    reasons.length === 0
      ? summary.undocumented.length === 0 && summary.diffs.length === 0
        ? 'Every observed endpoint is documented and matches its documentation.'
        : 'Nothing here fails the check.'
      : `**Failed:** ${reasons.join(', ')}.`,
  ];
  if (summary.undocumented.length > 0) {
    out.push(
      '',
      `#### Undocumented endpoints (${summary.undocumented.length})`,
      '',
      '| Endpoint | Interactions |',
      '| --- | ---: |',
    );
    for (const u of summary.undocumented) out.push(`| ${code(`${u.method} ${u.path}`)} | ${u.interactions} |`);
  }
  if (summary.diffs.length > 0) {
    // Where each diff's traffic was first seen, when the backend says (backends before it do not).
    const since = summary.diffs.some((d) => d.since);
    out.push(
      '',
      `#### Diffs against the documentation (${summary.diffs.length})`,
      '',
      `| Endpoint | Documented | Breaking | Changes |${since ? ' First seen |' : ''}`,
      `| --- | --- | --- | --- |${since ? ' --- |' : ''}`,
    );
    for (const d of summary.diffs)
      out.push(
        `| ${code(`${d.method} ${d.path}`)} | ${d.version} | ${d.breaking ? '**yes**' : 'no'} | ${d.changes.map((c) => code(describeChange(c))).join('<br>')} |${since ? ` ${d.since ? d.since.replace(/\|/g, '\\|') : '–'} |` : ''}`,
      );
  }
  const forProduction = productionChanges(summary);
  if (forProduction.length > 0) {
    out.push(
      '',
      `#### Against production (${forProduction.length})`,
      '',
      '| Endpoint | Production → this pull request | Breaking | Changes |',
      '| --- | --- | --- | --- |',
    );
    for (const e of forProduction)
      out.push(
        `| ${code(`${e.method} ${e.path}`)} | ${versionMove(e)} | ${e.breaking ? '**yes**' : 'no'} | ${e.changes.map((c) => code(describeChange(c))).join('<br>')} |`,
      );
  }
  if (runtime !== null && runtime.length > 0) {
    out.push(
      '',
      `#### Runtime against production, same endpoint and version (${runtime.length})`,
      '',
      '| Endpoint | Version | Requests (this / production) | p95 (this / production) | Error rate (this / production) | Latency | Errors |',
      '| --- | --- | ---: | ---: | ---: | --- | --- |',
    );
    for (const v of runtime) {
      const emphasised = (words: string): string => words.replace(/^REGRESSED/, '**regressed**');
      out.push(
        `| ${code(`${v.method} ${v.path}`)} | ${v.version} | ${v.requests} / ${v.productionRequests ?? 0} | ${v.latency ? `${ms(v.latency.pullRequestP95)} / ${ms(v.latency.productionP95)}` : ''} | ${v.errorRate ? `${percent(v.errorRate.pullRequestRate)} / ${percent(v.errorRate.productionRate)}` : ''} | ${v.latency ? emphasised(latencyWords(v.latency)) : NOT_IN_PRODUCTION} | ${v.errorRate ? emphasised(errorWords(v.errorRate)) : NOT_IN_PRODUCTION} |`,
      );
    }
  }
  const radius = summary.consumers;
  if (radius && radius.parts.length > 0) {
    out.push(
      '',
      `#### Production consumers${ofBuild(radius)} of the broken parts (last ${radius.days} days)`,
      '',
      '| Part | Consumers | Calls counted |',
      '| --- | --- | ---: |',
    );
    for (const part of radius.parts)
      out.push(
        `| ${code(`${part.method} ${part.path} ${part.status ?? 'any status'}`)} | ${
          part.consumers.length === 0
            ? 'none'
            : part.consumers
                .map(
                  (c) =>
                    `${c.label === null ? code(c.consumer) : c.label.replace(/\|/g, '\\|')} (${c.calls}, ${Math.round(c.share * 100)}%)`,
                )
                .join('<br>')
        }${part.otherCalls > 0 ? `<br>${part.otherCalls} call(s) past a bound` : ''} | ${part.calls} |`,
      );
  }
  const newest = summary.captures[0];
  if (newest !== undefined)
    out.push(
      '',
      `[Review in Spectator](${links.backend}/#/p/${encodeURIComponent(links.project)}/captures/${encodeURIComponent(newest)})`,
    );
  return `${out.join('\n')}\n`;
}

/** `spectator-agent check`: resolves with the exit code (see CHECK_EXIT); writes the summary to `out`. */
export async function runCheck(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: { write(text: string): unknown } = process.stdout,
  err: { write(text: string): unknown } = process.stderr,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.write(CHECK_HELP);
    return CHECK_EXIT.passed;
  }
  let options: CheckOptions;
  try {
    options = parseCheckOptions(argv, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    err.write(
      `spectator-agent check: invalid options:\n${error.problems.map((problem) => `  - ${problem}`).join('\n')}\n`,
    );
    return CHECK_EXIT.error;
  }
  const base = `${options.backend}/api/v1/projects/${encodeURIComponent(options.project)}/ci/${encodeURIComponent(options.pullRequest)}`;
  // `build` only when asked for, so a backend older than the option still answers the default.
  const build = options.consumersBuild === null ? '' : `&build=${encodeURIComponent(options.consumersBuild)}`;
  const summary = await getJson<CiSummaryResponse>(`${base}?days=${options.consumerDays}${build}`, options, err);
  if (summary === null) return CHECK_EXIT.error;
  if (options.consumersBuild !== null && summary.consumers?.build !== options.consumersBuild) {
    err.write(
      `spectator-agent check: the backend did not judge consumers of build ${options.consumersBuild} (it is older than this agent): cannot use --consumers-build\n`,
    );
    return CHECK_EXIT.error;
  }
  if (options.failOn.includes('breaking-with-consumers') && summary.consumers === undefined) {
    err.write(
      'spectator-agent check: the backend does not report consumers (it is older than this agent): cannot check breaking-with-consumers\n',
    );
    return CHECK_EXIT.error;
  }
  let runtime: RuntimeVerdict[] | null = null;
  if (options.failOn.some((item) => RUNTIME_FAIL_ON.includes(item))) {
    // Sent only when asked for, so a backend older than the option still answers the default.
    const window = options.productionDays === null ? '' : `?productionDays=${options.productionDays}`;
    const answer = await getJson<CiRuntimeResponse>(`${base}/runtime${window}`, options, err);
    if (answer === null) return CHECK_EXIT.error;
    runtime = judgeRuntime(answer, options.thresholds);
  }
  const verdict = judgeCiSummary(summary, options.failOn, runtime);
  out.write(verdict.text);
  const markdown = markdownReport(summary, options.failOn, options, runtime);
  try {
    if (options.markdown !== null) await writeFile(options.markdown, markdown);
    if (env.GITHUB_STEP_SUMMARY) await appendFile(env.GITHUB_STEP_SUMMARY, markdown);
  } catch (error) {
    err.write(`spectator-agent check: cannot write the Markdown report: ${(error as Error).message}\n`);
    return CHECK_EXIT.error;
  }
  return verdict.passed ? CHECK_EXIT.passed : CHECK_EXIT.failed;
}

/** How many times the check asks a backend that answers 503 (ask again) before it gives up. */
export const CHECK_ATTEMPTS = 3;
/** The longest wait between two of them, whatever `Retry-After` says. */
const MAX_RETRY_AFTER_SECONDS = 30;

/**
 * GETs JSON from the backend with the check's token; null after writing why to `err`. A 503 (its
 * database away for a moment, or the pull request's batches still being folded: `FoldPending`) is
 * asked again after its `Retry-After`, CHECK_ATTEMPTS times in all.
 */
async function getJson<T>(
  url: string,
  options: CheckOptions,
  err: { write(text: string): unknown },
): Promise<T | null> {
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Bearer ${options.token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      err.write(
        `spectator-agent check: cannot reach the backend at ${options.backend}: ${(error as Error).message}${cause ? ` (${cause})` : ''}\n`,
      );
      return null;
    }
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as T;
    let message = text.slice(0, 500);
    try {
      message = (JSON.parse(text) as ApiError).message ?? message;
    } catch {
      // not JSON: keep the text
    }
    if (response.status === 503 && attempt < CHECK_ATTEMPTS) {
      const header = response.headers.get('retry-after');
      const after = header === null || header.trim() === '' ? NaN : Number(header);
      const seconds = Number.isFinite(after) && after >= 0 ? Math.min(after, MAX_RETRY_AFTER_SECONDS) : 5;
      err.write(`spectator-agent check: the backend answered 503: ${message}; asking again in ${seconds} s\n`);
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      continue;
    }
    err.write(`spectator-agent check: the backend answered ${response.status}: ${message}\n`);
    return null;
  }
}
