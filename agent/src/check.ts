import type { ApiError, CiSummaryResponse, CompareEndpoint } from '@spectator/shared';
import { appendFile, writeFile } from 'node:fs/promises';
import { ConfigError, pullRequestFromCi } from './config';

/** What the CI gate can fail on. */
export const FAIL_ON = ['undocumented', 'breaking', 'diffs', 'production-breaking'] as const;
export type FailOn = (typeof FAIL_ON)[number];

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
}

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
                      breaks production's clients). Default undocumented,breaking.
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
    const key = FLAGS[flag];
    if (key === undefined) {
      problems.push(`unknown option ${flag}`);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') problems.push(`${flag} needs a value`);
    else given[key] = value;
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
  if (problems.length > 0) throw new ConfigError(problems);
  const markdown = given.markdown ?? (env.SPECTATOR_CHECK_MARKDOWN || null);
  return {
    backend: base,
    token: token as string,
    project: project as string,
    pullRequest: pullRequest as string,
    failOn: failOn as FailOn[],
    markdown,
  };
}

/** Why the gate fails (empty: it passes), by the --fail-on list. */
function failureReasons(summary: CiSummaryResponse, failOn: readonly FailOn[]): string[] {
  const reasons: string[] = [];
  if (summary.undocumented.length > 0 && failOn.includes('undocumented'))
    reasons.push(`${summary.undocumented.length} undocumented endpoint(s)`);
  const breaking = summary.diffs.filter((d) => d.breaking).length;
  if (failOn.includes('diffs') && summary.diffs.length > 0) reasons.push(`${summary.diffs.length} diff(s)`);
  else if (failOn.includes('breaking') && breaking > 0) reasons.push(`${breaking} breaking diff(s)`);
  const forProduction = productionChanges(summary).filter((e) => e.breaking).length;
  if (failOn.includes('production-breaking') && forProduction > 0)
    reasons.push(`${forProduction} endpoint(s) breaking for production's clients`);
  return reasons;
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
  const reasons = failureReasons(summary, failOn);
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
): string {
  const reasons = failureReasons(summary, failOn);
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
    out.push(
      '',
      `#### Diffs against the documentation (${summary.diffs.length})`,
      '',
      '| Endpoint | Documented | Breaking | Changes |',
      '| --- | --- | --- | --- |',
    );
    for (const d of summary.diffs)
      out.push(
        `| ${code(`${d.method} ${d.path}`)} | ${d.version} | ${d.breaking ? '**yes**' : 'no'} | ${d.changes.map((c) => code(describeChange(c))).join('<br>')} |`,
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
  const url = `${options.backend}/api/v1/projects/${encodeURIComponent(options.project)}/ci/${encodeURIComponent(options.pullRequest)}`;
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
    return CHECK_EXIT.error;
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text.slice(0, 500);
    try {
      message = (JSON.parse(text) as ApiError).message ?? message;
    } catch {
      // not JSON: keep the text
    }
    err.write(`spectator-agent check: the backend answered ${response.status}: ${message}\n`);
    return CHECK_EXIT.error;
  }
  const summary = JSON.parse(text) as CiSummaryResponse;
  const verdict = judgeCiSummary(summary, options.failOn);
  out.write(verdict.text);
  const markdown = markdownReport(summary, options.failOn, options);
  try {
    if (options.markdown !== null) await writeFile(options.markdown, markdown);
    if (env.GITHUB_STEP_SUMMARY) await appendFile(env.GITHUB_STEP_SUMMARY, markdown);
  } catch (error) {
    err.write(`spectator-agent check: cannot write the Markdown report: ${(error as Error).message}\n`);
    return CHECK_EXIT.error;
  }
  return verdict.passed ? CHECK_EXIT.passed : CHECK_EXIT.failed;
}
