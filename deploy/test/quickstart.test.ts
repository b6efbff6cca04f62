// docs/quickstart.md, run as a new user would: every command of its fenced blocks, in order, each
// recognised by a rule below (a command no rule knows fails the test, so page and test cannot
// drift); its dashboard steps in headless Chromium, pressing the buttons the page names in bold. A
// real backend (`npx spectator-backend`, on its own embedded PostgreSQL), the page's sample app, the
// real agent, curl. What differs from a laptop is only where things listen: free ports stand in
// for the page's 3000, 4000 and 8080, and the data folder is a temporary one.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { onFreePort } from '../../backend/src/database/embedded';
import {
  ensureDashboardBuilt,
  openBrowser,
  screenshot,
  until,
  type TestBrowser,
} from '../../dashboard/test/support/browser';
import { readRepoFile, REPO_ROOT } from './support/repo';

const PAGE = 'docs/quickstart.md';
const text = readRepoFile(PAGE);

/** The page's sections (`## ` headings), each with its text. */
const sections = text
  .split(/^## /m)
  .slice(1)
  .map((section) => ({ heading: section.split('\n', 1)[0]!, body: section }));

/** The text of the section whose heading starts with `<n>.`. */
function section(n: number): string {
  return sections.find((candidate) => candidate.heading.startsWith(`${n}.`))?.body ?? '';
}

/** Commands of a section's fenced `sh` blocks (comments dropped) and the text of its `js` blocks, in order. */
interface Step {
  kind: 'sh' | 'js';
  text: string;
}
function steps(body: string): Step[] {
  return [...body.matchAll(/```(sh|js)\n([\s\S]*?)```/g)].flatMap(([, kind, block]): Step[] =>
    kind === 'js'
      ? [{ kind: 'js' as const, text: block! }]
      : block!
          .split('\n')
          .map((line) => line.replace(/\s+#.*$/, '').trim())
          .filter((line) => line !== '')
          .map((line) => ({ kind: 'sh' as const, text: line })),
  );
}

/** A long-running command, in its own process group as a terminal runs it. */
interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const started: Started[] = [];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-quickstart-'));
// Run as root, the embedded PostgreSQL runs as another user, who must reach its folder.
fs.chmodSync(work, 0o755);
const dataDir = path.join(work, '.spectator');
const ports = { backend: 0, proxy: 0, app: 0 };
/** What the run learned: the admin token the backend printed, the agent token the dashboard made. */
const learned = { adminToken: '', agentToken: '', project: '' };
const shellEnv: NodeJS.ProcessEnv = {};
for (const [key, value] of Object.entries(process.env)) {
  // A laptop's environment: none of the test run's database, ports, tokens, CI variables or NODE_ENV.
  if (!/^(DATABASE_URL|PORT|HOST|LOG_LEVEL|NODE_ENV|CI|GITHUB_.*|CI_.*|SPECTATOR_.*|JEST_.*)$/.test(key))
    shellEnv[key] = value;
}
let browser: TestBrowser;
let page: Page;

/** The page's addresses, with the ports this run uses. */
function localize(command: string): string {
  // In one pass: a port put in for one address must not be read as another's (40001 holds 4000).
  const local: Record<string, number> = { 3000: ports.backend, 4000: ports.proxy, 8080: ports.app };
  return command
    .replace(/127\.0\.0\.1:(3000|4000|8080)\b/g, (_address, port: string) => `127.0.0.1:${local[port]}`)
    .replace(/^PORT=8080 /, 'PORT=0 ');
}

function startShell(command: string, cwd: string, env: NodeJS.ProcessEnv = {}): Started {
  const child = spawn('sh', ['-c', command], {
    cwd,
    env: { ...shellEnv, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const run = { child, output: () => output, exited };
  started.push(run);
  return run;
}

async function runShell(command: string, cwd: string): Promise<string> {
  const { stdout } = await promisify(execFile)('sh', ['-c', command], { cwd, env: shellEnv, timeout: 30_000 });
  return stdout;
}

/** Waits for `pattern` in a started command's output; fails with the output if it exits first. */
async function printed(run: Started, pattern: RegExp, what: string, timeoutMs = 120_000): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  await until(
    what,
    () => {
      if (run.child.exitCode !== null) throw new Error(`${what}: exited (${run.child.exitCode}):\n${run.output()}`);
      match = pattern.exec(run.output());
      return match !== null;
    },
    timeoutMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${run.output()}`);
  });
  return match!;
}

/** A command that exited because another process took its port between `freePort` and its listen. */
const portTaken = (error: unknown): boolean => String(error).includes('EADDRINUSE');

/** Each rule: a command of the page, and what running it means here. */
const RULES: Array<[RegExp, (match: RegExpMatchArray, command: string) => Promise<void>]> = [
  [
    /^npm install$/,
    async () => {
      // This checkout is installed (CI's `npm ci` ran): what npm install leaves behind is here.
      for (const bin of ['spectator-backend', 'spectator-agent'])
        expect(fs.existsSync(path.join(REPO_ROOT, 'node_modules/.bin', bin))).toBe(true);
      expect(JSON.parse(readRepoFile('package.json')).scripts.prepare).toBe('tsc -b shared agent backend');
    },
  ],
  [
    /^npm run build$/,
    async () => {
      // `npm run build` is the TypeScript build and the dashboard's; both run here, the dashboard's
      // under the browser tests' lock (a parallel test file may be building it).
      expect(JSON.parse(readRepoFile('package.json')).scripts.build).toBe(
        'tsc -b shared agent backend && npm run build -w @spectator/dashboard',
      );
      await promisify(execFile)('npx', ['tsc', '-b', 'shared', 'agent', 'backend'], { cwd: REPO_ROOT });
      await ensureDashboardBuilt();
    },
  ],
  [
    /^npx spectator-backend$/,
    async (_match, command) => {
      // The admin token is printed once the backend listens: a backend that found its port taken exits before.
      const { backend, token } = await onFreePort(async (port) => {
        ports.backend = port;
        const started = startShell(command, REPO_ROOT, { PORT: String(port), SPECTATOR_DATA_DIR: dataDir });
        const [, shown] = await printed(
          started,
          /Spectator admin token \(shown once[^\n]*\n\s+(\S+)\n/,
          'the admin token',
        );
        return { backend: started, token: shown };
      }, portTaken);
      learned.adminToken = token!;
      // As the page shows it: the same words, a token that starts as the page's does.
      const [, shownPrefix] =
        /```text\n(Spectator admin token \(shown once, also saved to) [^\n]*\n\s+(spk_)…\n```/.exec(text) ?? ['', ''];
      expect(shownPrefix).toBe('Spectator admin token (shown once, also saved to');
      expect(backend.output()).toContain(shownPrefix!);
      expect(token).toMatch(/^spk_/);
      await printed(backend, /spectator backend listening/, 'the backend to listen', 60_000);
      expect(section(1)).toContain('`spectator backend listening`');
      await until(
        'the backend to answer',
        async () => (await fetch(`http://127.0.0.1:${ports.backend}/api/v1/health`).catch(() => null))?.ok === true,
        60_000,
      );
    },
  ],
  [
    /^cat \.spectator\/admin-token$/,
    async (_match, command) => {
      expect((await runShell(command, work)).trim()).toBe(learned.adminToken);
    },
  ],
  [
    /^PORT=8080 node app\.js$/,
    async (_match, command) => {
      const app = startShell(localize(command), work);
      const [, port] = await printed(app, /listening on http:\/\/127\.0\.0\.1:(\d+)/, 'the app to listen', 30_000);
      ports.app = Number(port);
    },
  ],
  [
    /^export SPECTATOR_TOKEN=\S+$/,
    async () => {
      // The token the dashboard showed once (section 2), where the page says to paste it.
      expect(learned.agentToken).not.toBe('');
      shellEnv.SPECTATOR_TOKEN = learned.agentToken;
    },
  ],
  [
    /^npx spectator-agent --upstream http:\/\/127\.0\.0\.1:8080 --listen 127\.0\.0\.1:4000 --backend http:\/\/127\.0\.0\.1:3000$/,
    async (_match, command) => {
      const agent = await onFreePort(async (port) => {
        ports.proxy = port;
        const started = startShell(localize(command), REPO_ROOT);
        await printed(started, /agent started/, 'the agent to start', 60_000);
        return started;
      }, portTaken);
      await printed(agent, /connected to backend/, 'the agent to connect', 60_000);
    },
  ],
  [
    /^curl -s (?:-X POST )?http:\/\/127\.0\.0\.1:4000\/\S+(?: -H 'content-type: application\/json' -d '.+')?$/,
    async (_match, command) => {
      const answer = JSON.parse(await runShell(localize(command), work)) as { id?: number; name?: string };
      expect(answer).toEqual(expect.objectContaining({ id: expect.any(Number), name: expect.any(String) }));
    },
  ],
];

/** A label the page names in bold, as the test finds it on the screen. */
function named(section: string, label: string): string {
  expect({ section: section.split('\n', 1)[0], named: section.includes(`**${label}**`) }).toEqual({
    section: section.split('\n', 1)[0],
    named: true,
  });
  return label;
}

/** Section 2: sign in with the admin token, create the project, create its agent token. */
async function dashboardSetup(section: string): Promise<void> {
  const origin = `http://127.0.0.1:${ports.backend}`;
  expect(section).toContain('<http://127.0.0.1:3000>');
  await page.goto(localize('http://127.0.0.1:3000'));
  await page.getByLabel(named(section, 'Token')).fill(learned.adminToken);
  expect(await page.getByLabel(named(section, 'Project')).inputValue()).toBe('');
  await page.getByRole('button', { name: named(section, 'Sign in') }).click();

  const create = page.getByRole('form', { name: named(section, 'Create a project') });
  await create.waitFor();
  await create.getByLabel(named(section, 'Name')).fill('My API');
  expect(await create.getByLabel(named(section, 'Slug')).inputValue()).toBe('my-api');
  await screenshot(page, 'quickstart-1-create-project');
  await create.getByRole('button', { name: named(section, 'Create project') }).click();
  await page.waitForURL(`${origin}/#/p/my-api/captures`);
  learned.project = 'my-api';

  await page.getByRole('link', { name: named(section, 'Settings') }).click();
  const tokens = page.getByRole('region', { name: named(section, 'Tokens') });
  await tokens.getByLabel('Name').fill('my laptop');
  await tokens.getByLabel(named(section, 'Scope')).selectOption('agent');
  await tokens.getByRole('button', { name: named(section, 'Create token') }).click();
  const shown = tokens.getByLabel('New token');
  await shown.waitFor();
  learned.agentToken = await shown.inputValue();
  expect(await tokens.locator('.token-use').textContent()).toContain(`--backend ${origin}`);
  await screenshot(page, 'quickstart-2-agent-token');

  // The tokens of CI the section speaks of, from the same form: an agent token limited to `ci`, and a read token for the gate.
  expect(section).toContain('`ci`');
  await tokens.getByRole('button', { name: 'Done' }).click();
  await tokens.getByLabel('Name').fill('ci agent');
  await tokens.getByLabel('Scope').selectOption('agent');
  await tokens.getByRole('checkbox', { name: 'ci' }).check();
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await tokens.getByLabel('New token').waitFor();
  expect(await tokens.locator('.token-use').textContent()).toContain('SPECTATOR_TOKEN secret');
  await tokens.getByRole('button', { name: 'Done' }).click();
  await tokens.getByLabel('Name').fill('ci gate');
  await tokens.getByLabel('Scope').selectOption('read');
  await tokens.getByRole('button', { name: 'Create token' }).click();
  await tokens.getByLabel('New token').waitFor();
  expect(await tokens.locator('.token-use').textContent()).toContain('spectator-agent check --token');
  const created = await fetch(`${origin}/api/v1/projects/my-api/tokens`, {
    headers: { authorization: `Bearer ${learned.adminToken}` },
  }).then((answer) => answer.json() as Promise<Array<{ name: string; scope: string; environments: string[] | null }>>);
  expect(created.map(({ name, scope, environments }) => ({ name, scope, environments }))).toEqual(
    expect.arrayContaining([
      { name: 'ci agent', scope: 'agent', environments: ['ci'] },
      { name: 'ci gate', scope: 'read', environments: null },
    ]),
  );

  // Every bold name of the section is one pressed or filled above: the page names nothing else.
  const used = ['Token', 'Project', 'Sign in', 'Create a project', 'Name', 'Slug', 'Create project'];
  used.push('Settings', 'Tokens', 'Scope', 'Create token');
  expect([...new Set([...section.matchAll(/\*\*([^*]+)\*\*/g)].map((match) => match[1]))].sort()).toEqual(used.sort());
}

/** Section 4: the Review lists the app's endpoints the page names, as undocumented. */
async function seeEndpoints(section: string): Promise<void> {
  const expected = ['GET /users/{userId}', 'POST /users'];
  for (const endpoint of expected) expect(section).toContain(`\`${endpoint}\``);
  await page.getByRole('link', { name: named(section, 'Review') }).click();
  const rows = page.locator('[data-testid=undocumented] tbody tr');
  // The capture's first counts arrive within the agent's batch interval; the Review updates live.
  await until(
    'the Review to list both endpoints',
    async () => {
      // A row reads method, path and counts without spaces between them ("GET/users/{userId}22").
      const listed = (await rows.allTextContents()).map((row) => row.replace(/\s+/g, ''));
      return expected.every((endpoint) => listed.some((row) => row.startsWith(endpoint.replace(' ', ''))));
    },
    60_000,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}; listed: ${JSON.stringify(await rows.allTextContents())}`);
  });
  await screenshot(page, 'quickstart-3-review');
}

beforeAll(async () => {
  browser = await openBrowser();
  page = browser.page;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  // Ctrl-C in each terminal, as the page says; the backend stops its PostgreSQL.
  for (const run of started.filter((candidate) => candidate.child.exitCode === null)) {
    try {
      process.kill(-run.child.pid!, 'SIGINT');
    } catch {
      // gone already
    }
  }
  await Promise.all(started.map((run) => run.exited));
  fs.rmSync(work, { recursive: true, force: true });
}, 120_000);

it('the page has the four steps this test runs, and links only to files that exist', () => {
  for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g))
    expect({ target, exists: fs.existsSync(path.join(REPO_ROOT, 'docs', target!)) }).toEqual({ target, exists: true });
  expect(sections.map((section) => section.heading.slice(0, 2))).toEqual(
    expect.arrayContaining(['1.', '2.', '3.', '4.']),
  );
});

it('runs every command and dashboard step of docs/quickstart.md, ending with the app’s endpoints in the Review', async () => {
  for (const section of sections) {
    if (section.heading.startsWith('2.')) await dashboardSetup(section.body);
    if (section.heading.startsWith('4.')) await seeEndpoints(section.body);
    for (const step of steps(section.body)) {
      if (step.kind === 'js') {
        fs.writeFileSync(path.join(work, 'app.js'), step.text);
        continue;
      }
      const rule = RULES.find(([pattern]) => pattern.test(step.text));
      expect({ command: step.text, covered: rule !== undefined }).toEqual({ command: step.text, covered: true });
      await rule![1](step.text.match(rule![0])!, step.text);
    }
  }
  expect(learned).toEqual({ adminToken: expect.any(String), agentToken: expect.any(String), project: 'my-api' });
}, 420_000);
