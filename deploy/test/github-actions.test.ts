import { spawnSync } from 'node:child_process';
import { parseAgentConfig } from '@spectator/agent';
import { DEFAULT_REGRESSION_THRESHOLDS } from '@spectator/shared';
import { parseCheckOptions } from '../../agent/src/check';
import { parse } from 'yaml';
import { readRepoFile } from './support/repo';

interface Step {
  name?: string;
  env?: Record<string, string>;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string | number>;
  'working-directory'?: string;
}

interface Workflow {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  jobs: Record<string, { 'runs-on': string; 'timeout-minutes'?: number; env?: Record<string, string>; steps: Step[] }>;
}

const text = readRepoFile('deploy/github-actions.yml');
const workflow = parse(text) as Workflow;
const [job] = Object.values(workflow.jobs);
const steps = job!.steps;

/** Index of the first step whose `run` contains `fragment`; fails the test when none does. */
function stepRunning(fragment: string): number {
  const index = steps.findIndex((step) => step.run?.includes(fragment));
  expect({ fragment, found: index >= 0 }).toEqual({ fragment, found: true });
  return index;
}

describe('deploy/github-actions.yml', () => {
  it('runs for pull requests, with read-only repository access and a time limit', () => {
    expect(Object.keys(workflow.on)).toEqual(['pull_request']);
    expect(workflow.permissions).toEqual({ contents: 'read' });
    expect(Object.keys(workflow.jobs)).toHaveLength(1);
    expect(job!['timeout-minutes']).toBeGreaterThan(0);
  });

  it('starts the app behind the agent as a CI run of the pull request, in the background', () => {
    const start = steps[stepRunning('-- npm start')]!.run!;
    expect(start).toContain(
      'spectator-agent --env ci --shape-budget 100 --pr ${{ github.event.pull_request.number }} --commit ${{ github.event.pull_request.head.sha }} -- npm start',
    );
    // The pull request's head commit: on pull_request events github.sha names a merge commit.
    expect(text).not.toContain('${{ github.sha }}');
    expect(start).toMatch(/-- npm start[^\n]*&\n/);
    // It waits for the agent's readiness on the admin address the job sets, and gives up.
    expect(start).toContain('http://$SPECTATOR_ADMIN/readyz');
    expect(start).toMatch(/for attempt in \$\(seq \d+\)/);
  });

  it("is read by the agent's own option parser as a CI run of the pull request that wraps npm start", () => {
    const start = steps[stepRunning('-- npm start')]!.run!;
    const line = /^spectator-agent (.*) -- npm start/m.exec(start)![1]!;
    const argv = [
      ...line
        .replace('${{ github.event.pull_request.number }}', '42')
        .replace('${{ github.event.pull_request.head.sha }}', 'f'.repeat(40))
        .split(' '),
      '--',
      'npm',
      'start',
    ];
    // What the runner sets, with the job's env (the vars and secrets given values).
    const env = {
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      ...job!.env,
      SPECTATOR_BACKEND_URL: 'https://spectator.example.com',
      SPECTATOR_TOKEN: 'agent-token',
    };
    const config = parseAgentConfig(argv, env);
    expect(config.environment).toEqual({ kind: 'ci', pullRequest: '42', commit: 'f'.repeat(40) });
    expect(config.command).toEqual(['npm', 'start']);
    expect(`${config.listen.host}:${config.listen.port}`).toBe(job!.env!.SPECTATOR_LISTEN);
    expect(`${config.admin?.host}:${config.admin?.port}`).toBe(job!.env!.SPECTATOR_ADMIN);
    expect(config.backend).toBe('wss://spectator.example.com/api/v1/agents/stream');
  });

  it("runs the CI gate with a read token, read by the check's own option parser", () => {
    const gate = steps[stepRunning('spectator-agent check')]!;
    expect(gate.env).toEqual({ SPECTATOR_TOKEN: '${{ secrets.SPECTATOR_READ_TOKEN }}' });
    const argv = gate.run!.replace('${{ github.event.pull_request.number }}', '42').split(' ').slice(2);
    const values: Record<string, string> = {
      'vars.SPECTATOR_BACKEND_URL': 'https://spectator.example.com',
      'vars.SPECTATOR_PROJECT': 'posts-api',
      'secrets.SPECTATOR_READ_TOKEN': 'read-token',
    };
    const env = Object.fromEntries(
      Object.entries({ ...job!.env, ...gate.env }).map(([key, value]) => [
        key,
        value.replace(/^\$\{\{ (.+) \}\}$/, (_, name: string) => values[name] ?? ''),
      ]),
    );
    expect(parseCheckOptions(argv, env)).toEqual({
      backend: 'https://spectator.example.com',
      token: 'read-token',
      project: 'posts-api',
      pullRequest: '42',
      failOn: ['undocumented', 'breaking'],
      markdown: null,
      thresholds: DEFAULT_REGRESSION_THRESHOLDS,
      consumerDays: 30,
      // No --production-days in the workflow: the backend's own window (7 days) is used.
      productionDays: null,
      consumersBuild: null,
    });
  });

  it('sends the tests through the agent: API_URL is the proxy address SPECTATOR_LISTEN', () => {
    const env = job!.env!;
    expect(new URL(env.API_URL!).host).toBe(env.SPECTATOR_LISTEN);
    expect(env.SPECTATOR_ADMIN).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(env.SPECTATOR_ADMIN).not.toBe(env.SPECTATOR_LISTEN);
    expect(env.SPECTATOR_TOKEN).toBe('${{ secrets.SPECTATOR_TOKEN }}');
    expect(env.SPECTATOR_BACKEND_URL).toBe('${{ vars.SPECTATOR_BACKEND_URL }}');
  });

  it('starts the agent, runs the tests, stops the agent whatever happened, then runs the CI gate', () => {
    const order = [
      stepRunning('-- npm start'),
      stepRunning('npm test'),
      stepRunning('kill -INT'),
      stepRunning('spectator-agent check'),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(steps[order[2]!]!.if).toBe('always()');
    expect(steps[order[3]!]!.run).toBe(
      'spectator-agent check --pr ${{ github.event.pull_request.number }} --fail-on undocumented,breaking',
    );
    // Stopping waits for the agent to send what it holds, for a bounded time.
    expect(steps[order[2]!]!.run).toMatch(/for attempt in \$\(seq \d+\)[\s\S]*kill -0/);
  });

  it('builds the agent with the command the agent image builds with, and puts it on the PATH', () => {
    const build = steps.find((step) => step['working-directory'] === '.spectator')!;
    expect(build.run).toContain('npm ci --ignore-scripts');
    const bundle = /^npm run bundle:image .*$/m.exec(build.run!)?.[0];
    expect(readRepoFile('Dockerfile.agent')).toContain(`RUN ${bundle}\n`);
    expect(build.run).toContain('/agent/dist/image/spectator-agent.cjs');
    expect(build.run).toContain('>> "$GITHUB_PATH"');
    const checkout = steps.find((step) => step.with?.path === '.spectator')!;
    expect(checkout.uses).toMatch(/^actions\/checkout@v\d+$/);
  });

  it('uses only the github, vars, secrets and env contexts, and actions pinned to a major version', () => {
    const expressions = [...text.matchAll(/\$\{\{\s*([^}]*?)\s*\}\}/g)].map((match) => match[1]!);
    expect(expressions.length).toBeGreaterThan(0);
    for (const expression of expressions) expect(expression).toMatch(/^(github|vars|secrets|env)\.[\w.]+$/);
    for (const step of steps.filter((candidate) => candidate.uses)) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/);
  });

  it('has run scripts that bash parses', () => {
    for (const step of steps.filter((candidate) => candidate.run)) {
      // Expressions are replaced before the shell sees the script, as the runner does.
      const script = step.run!.replace(/\$\{\{[^}]*\}\}/g, '42');
      const result = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
      expect({ step: step.name ?? step.run, status: result.status, stderr: result.stderr }).toEqual({
        step: step.name ?? step.run,
        status: 0,
        stderr: '',
      });
    }
  });
});
