import type { CiSummaryResponse, TokenResponse } from '@spectator/shared';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { freePort, onFreePort } from '../src/database/embedded';
import { startTestBackend, type TestBackend } from './support';
import { packAgent } from './support/repo-lock';

// The composite action (action.yml at the repository root), its steps run here as a GitHub
// runner runs them: `${{ }}` expressions filled from the inputs, the pull_request event and
// earlier steps' outputs; `if:` conditions; bash with -eo pipefail; GITHUB_OUTPUT, GITHUB_PATH,
// GITHUB_STEP_SUMMARY and RUNNER_TEMP as files and folders of a fake runner.

const ROOT = path.resolve(__dirname, '../..');

interface ActionStep {
  id?: string;
  name: string;
  if?: string;
  shell: string;
  env?: Record<string, string>;
  run: string;
}

interface Action {
  inputs: Record<string, { required?: boolean; default?: string }>;
  runs: { using: string; steps: ActionStep[] };
}

interface Context {
  inputs: Record<string, string>;
  event: { pull_request?: { number: number; head: { sha: string } } };
  steps: Record<string, { outputs: Record<string, string> }>;
}

/** The value of one expression: `inputs.x`, `github.event.pull_request.…`, `steps.id.outputs.x`, or a quoted string. */
function value(expression: string, context: Context): string {
  const text = expression.trim();
  const quoted = /^'(.*)'$/.exec(text);
  if (quoted) return quoted[1]!;
  const [head, ...rest] = text.split('.');
  if (head === 'inputs') return context.inputs[rest.join('.')] ?? '';
  if (head === 'steps') return context.steps[rest[0]!]?.outputs[rest[2]!] ?? '';
  if (head === 'github' && rest[0] === 'event') {
    let found: unknown = context.event;
    for (const key of rest.slice(1)) found = (found as Record<string, unknown> | undefined)?.[key];
    return found === undefined ? '' : String(found);
  }
  throw new Error(`expression not understood by this runner: ${text}`);
}

/** `${{ … }}` filled in. */
function interpolate(text: string, context: Context): string {
  return text.replace(/\$\{\{(.*?)\}\}/g, (_match, expression: string) => value(expression, context));
}

/** An `if:` condition: `always()`, `a != 'b'`, `a == 'b'`, joined by `&&`; without always(), only after success. */
function shouldRun(condition: string | undefined, context: Context, failed: boolean): boolean {
  if (condition === undefined) return !failed;
  const terms = condition.split('&&').map((term) => term.trim());
  const always = terms.includes('always()');
  if (failed && !always) return false;
  return terms
    .filter((term) => term !== 'always()')
    .every((term) => {
      const match = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(term);
      if (!match) throw new Error(`condition not understood by this runner: ${term}`);
      const equal = value(match[1]!, context) === value(match[3]!, context);
      return match[2] === '==' ? equal : !equal;
    });
}

interface RunResult {
  /** Exit code of the job: 0 when every step that ran succeeded. */
  code: number;
  output: string;
  summary: string;
  ran: string[];
  outputs: Context['steps'];
}

/** Runs the action's steps with `inputs` for a pull request event. */
async function runAction(inputs: Record<string, string>, event: Context['event']): Promise<RunResult> {
  const action = parse(fs.readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as Action;
  expect(action.runs.using).toBe('composite');
  const runner = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-action-'));
  const temp = path.join(runner, 'temp');
  fs.mkdirSync(temp);
  const summary = path.join(runner, 'summary.md');
  fs.writeFileSync(summary, '');
  const withDefaults = Object.fromEntries(
    Object.entries(action.inputs).map(([name, input]) => [name, inputs[name] ?? input.default ?? '']),
  );
  for (const [name, input] of Object.entries(action.inputs))
    if (input.required) expect({ name, given: withDefaults[name] !== '' }).toEqual({ name, given: true });
  const context: Context = { inputs: withDefaults, event, steps: {} };
  const paths: string[] = [];
  let output = '';
  let failed = false;
  const ran: string[] = [];
  for (const [index, step] of action.runs.steps.entries()) {
    if (!shouldRun(step.if, context, failed)) continue;
    ran.push(step.name);
    expect(step.shell).toBe('bash');
    const outputFile = path.join(runner, `output-${index}`);
    const pathFile = path.join(runner, `path-${index}`);
    fs.writeFileSync(outputFile, '');
    fs.writeFileSync(pathFile, '');
    const env = {
      // The machine's environment, as a runner's steps get it (less what `npx jest` set for itself).
      ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
      PATH: [...paths, process.env.PATH].join(':'),
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_EVENT_NAME: 'pull_request',
      // On pull_request events github.sha is the merge commit GitHub makes: never the evidence's commit.
      GITHUB_SHA: 'f'.repeat(40),
      GITHUB_REF: `refs/pull/${event.pull_request?.number ?? 0}/merge`,
      RUNNER_TEMP: temp,
      GITHUB_OUTPUT: outputFile,
      GITHUB_PATH: pathFile,
      GITHUB_STEP_SUMMARY: summary,
      // The install step's npm takes the agent's dependencies from the cache that installed this
      // repository, without asking the registry whether each is still current (as agent-package and
      // image-runtime install); what it installs is the same. A runner has no such variable.
      npm_config_prefer_offline: 'true',
      ...Object.fromEntries(Object.entries(step.env ?? {}).map(([key, text]) => [key, interpolate(text, context)])),
    };
    const code = await new Promise<number>((resolve) => {
      const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', interpolate(step.run, context)], {
        env,
        cwd: runner,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      // 'close', not 'exit': the step's last output can still be in its pipes when the process exits.
      child.once('close', (exit) => resolve(exit ?? 1));
    });
    if (step.id)
      context.steps[step.id] = {
        outputs: Object.fromEntries(
          fs
            .readFileSync(outputFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => line.split(/=(.*)/s, 2) as [string, string]),
        ),
      };
    paths.unshift(...fs.readFileSync(pathFile, 'utf8').split('\n').filter(Boolean));
    if (code !== 0) failed = true;
  }
  const result = {
    code: failed ? 1 : 0,
    output,
    summary: fs.readFileSync(summary, 'utf8'),
    ran,
    outputs: context.steps,
  };
  fs.rmSync(runner, { recursive: true, force: true });
  return result;
}

/** A run whose agent could not listen: another process took its port between `freePort` and the agent's listen. */
class AgentPortTaken extends Error {}

/**
 * Runs the action with the agent's proxy and admin ports free loopback ports, and again on other
 * ports when the agent exited because another process took one of them first.
 */
async function runActionOnFreePorts(inputs: Record<string, string>, event: Context['event']): Promise<RunResult> {
  return onFreePort(
    async (listen) => {
      const admin = await freePort();
      const result = await runAction({ ...inputs, listen: `127.0.0.1:${listen}`, admin: `127.0.0.1:${admin}` }, event);
      if (result.code !== 0 && result.output.includes('EADDRINUSE')) throw new AgentPortTaken(result.output);
      return result;
    },
    (error) => error instanceof AgentPortTaken,
  );
}

describe('action.yml, run as a GitHub runner runs it', () => {
  let backend: TestBackend;
  let tarball: string;
  let app: string;
  const tokens = { agent: '', read: '' };
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-action-work-'));
  const headSha = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';

  beforeAll(async () => {
    backend = await startTestBackend();
    await backend.api('POST', '/projects', { slug: 'shop', name: 'Shop' });
    for (const scope of ['agent', 'read'] as const)
      tokens[scope] = (await backend.api<TokenResponse>('POST', '/projects/shop/tokens', { name: scope, scope })).body
        .token as string;
    // The agent as users install it: its npm package.
    tarball = await packAgent(work);
    app = path.join(work, 'app.js');
    fs.writeFileSync(
      app,
      `require('node:http').createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify([{ id: 1, name: 'pen' }])); }).listen(Number(process.env.PORT), '127.0.0.1');`,
    );
  }, 120_000);

  afterAll(async () => {
    await backend?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const inputs = (): Record<string, string> => ({
    'backend-url': backend.url,
    project: 'shop',
    token: tokens.agent,
    'read-token': tokens.read,
    start: `node ${app}`,
    test: `node -e "fetch(process.env.API_URL + '/items').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"`,
    agent: tarball,
  });

  it('a pull request from a fork (no token) skips with one clear line, at once (its first step only)', async () => {
    const result = await runAction(
      { ...inputs(), token: '', 'read-token': '' },
      { pull_request: { number: 7, head: { sha: headSha } } },
    );
    expect(result.code).toBe(0);
    expect(result.output.trim().split('\n')).toEqual([
      'Spectator skipped: no agent token (pull requests from forks get no secrets).',
    ]);
    expect(result.ran).toHaveLength(1);
    expect(result.outputs.context?.outputs.skip).toBe('true');
  });

  it("records the tests' traffic as evidence of the pull request's head commit, fails the gate on the undocumented endpoint, and writes the report to the job summary", async () => {
    const result = await runActionOnFreePorts(inputs(), { pull_request: { number: 42, head: { sha: headSha } } });
    expect(result.ran).toEqual([
      'Spectator: pull request and commit',
      'Spectator: install the agent',
      'Spectator: start the app behind the agent',
      'Spectator: run the tests through the agent',
      'Spectator: stop the agent (it sends what it still holds)',
      'Spectator: CI gate',
    ]);
    // The gate fails: GET /items is undocumented.
    expect(result.code).toBe(1);
    expect(result.summary).toContain('/items');
    const ci = await backend.api<CiSummaryResponse>('GET', '/projects/shop/ci/42');
    expect(ci.status).toBe(200);
    expect(ci.body.commit).toBe(headSha);
    expect(ci.body.undocumented.map((endpoint) => `${endpoint.method} ${endpoint.path}`)).toEqual(['GET /items']);
  }, 120_000);
});
