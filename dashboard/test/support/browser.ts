import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { withRepoLock } from '../../../backend/test/support/repo-lock';

export const DASHBOARD_DIR = path.resolve(__dirname, '../..');
export const DIST_DIR = path.join(DASHBOARD_DIR, 'dist');
/** Screenshots of each step, kept as test artifacts (gitignored). */
export const ARTIFACTS_DIR = path.resolve(DASHBOARD_DIR, '../artifacts/e2e');
const CHROMIUM = process.env.SPECTATOR_CHROMIUM ?? '/usr/bin/chromium';

/** Flags for a quiet, reproducible headless Chromium: no GPU, no background traffic, no sandbox (containers). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

interface BuildStep {
  name: string;
  inputs: string[];
  outputs: string[];
}
// The one staleness rule, shared with `npm start` (deploy/start/build.js): dist is rebuilt when an
// output is missing or older than any input of the dashboard's build step.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS script with no type declarations
const { BUILD_STEPS, staleReason } = require('../../../deploy/start/build.js') as {
  BUILD_STEPS: readonly BuildStep[];
  staleReason: (step: BuildStep, root: string) => string | null;
};
const DASHBOARD_STEP = BUILD_STEPS.find((step) => step.outputs.includes('dashboard/dist/index.html')) as BuildStep;

/**
 * Builds the dashboard with Vite when dist is missing or stale (CI runs only `npm test`). Several
 * test files may ask at once (jest runs two workers), so the build holds a lock directory.
 */
export async function ensureDashboardBuilt(): Promise<void> {
  await withRepoLock('dashboard/.build-lock', async () => {
    if (staleReason(DASHBOARD_STEP, path.resolve(DASHBOARD_DIR, '..'))) {
      const vite = path.join(
        path.dirname(require.resolve('vite/package.json', { paths: [DASHBOARD_DIR] })),
        'bin/vite.js',
      );
      // Under jest NODE_ENV is `test`; vite.config.mts makes the build a production one anyway.
      await promisify(execFile)(process.execPath, [vite, 'build', '--logLevel', 'warn'], { cwd: DASHBOARD_DIR });
    }
  });
}

/** A fresh headless Chromium (own profile directory, removed on close). */
export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * `SPECTATOR_E2E_JITTER_MS=300` holds each request to the API back a random 0–300 ms in the browser,
 * so the answers to requests a screen makes together come back in any order. A test that waits for
 * one list and then reads another at once (a race a loaded CI loses one run in many) fails here
 * within a few runs. For hunting races (docs/dashboard.md, Tests); CI leaves it unset.
 */
const JITTER_MS = Number(process.env.SPECTATOR_E2E_JITTER_MS ?? 0);

/** Starts Debian's Chromium through playwright-core with a fresh `--user-data-dir` and a 1280×800 viewport. */
export async function openBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set SPECTATOR_CHROMIUM)`);
  const profile = await mkdtemp(path.join(os.tmpdir(), 'spectator-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  if (JITTER_MS > 0)
    await context.route(/\/api\/v1\//, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * JITTER_MS));
      await route.fallback();
    });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until `condition()` holds, checking every 50 ms, failing with `what` after `timeoutMs` (generous: the machine is shared). */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Signs `page` in to the dashboard at `baseUrl` with a token, in `project`, and waits for its first screen. */
export async function signIn(page: Page, baseUrl: string, token: string, project: string): Promise<void> {
  await page.goto(`${baseUrl}/#/signin?token=${encodeURIComponent(token)}&project=${encodeURIComponent(project)}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`#/p/${project}/`));
}

/** Saves a full-page screenshot as artifacts/e2e/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
