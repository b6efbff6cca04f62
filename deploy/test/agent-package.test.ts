import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { packAgent } from '../../backend/test/support/repo-lock';
import { REPO_ROOT, readRepoFile } from './support/repo';

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** The packages `names` pull in (themselves included), from the root lockfile. */
function runtimeClosure(names: string[]): Set<string> {
  const lock = JSON.parse(readRepoFile('package-lock.json')) as { packages: Record<string, LockEntry> };
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const entry = lock.packages[`node_modules/${name}`] ?? lock.packages[`agent/node_modules/${name}`];
    for (const dep of Object.keys({ ...entry?.dependencies, ...entry?.optionalDependencies })) visit(dep);
  };
  names.forEach(visit);
  return seen;
}

/** Names of the packages installed in `nodeModules` (scoped ones as `@scope/name`). */
function installedPackages(nodeModules: string): string[] {
  return fs
    .readdirSync(nodeModules)
    .filter((entry) => !entry.startsWith('.'))
    .flatMap((entry) =>
      entry.startsWith('@') ? fs.readdirSync(path.join(nodeModules, entry)).map((name) => `${entry}/${name}`) : [entry],
    );
}

/** Starts `spectator-agent` with `args`; resolves with its proxy URL once it logged `agent started`. */
function startInstalledAgent(bin: string, args: string[]) {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const proxyUrl = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n').find((l) => l.includes('"msg":"agent started"'));
      if (line) resolve((JSON.parse(line) as { proxy: string }).proxy);
    });
    void exited.then((code) => reject(new Error(`agent exited (${code}) before it started: ${stderr}`)));
  });
  return { child, proxyUrl, exited };
}

/** The agent at `bin` proxies a request to an app, then stops with exit code 0 on SIGTERM. */
async function proxiesAndStops(bin: string, work: string): Promise<void> {
  const upstream = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const { port } = upstream.address() as { port: number };
  const agent = startInstalledAgent(bin, [
    '--upstream',
    `http://127.0.0.1:${port}`,
    '--listen',
    '127.0.0.1:0',
    '--config',
    path.join(work, 'none.yml'),
  ]);
  try {
    const proxy = await agent.proxyUrl;
    const answer = await fetch(`${proxy}/users/1`);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ path: '/users/1' });
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
  } finally {
    agent.child.kill('SIGKILL');
    await new Promise((resolve) => upstream.close(resolve));
  }
}

// What a user gets from the registry: `npm pack` of the workspace, installed into an empty folder.
describe('the @spectator/agent package, installed on its own', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-agent-package-'));
  const app = path.join(work, 'app');
  const agentManifest = JSON.parse(readRepoFile('agent/package.json')) as {
    version: string;
    dependencies: Record<string, string>;
  };
  const bin = path.join(app, 'node_modules/.bin/spectator-agent');

  beforeAll(async () => {
    const tarball = await packAgent(work);
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), '{"private":true}');
    // --prefer-offline: the cache that installed the repository has every package it needs.
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
      cwd: app,
      stdio: 'ignore',
    });
  }, 120_000);

  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('holds only its runtime dependencies: no @spectator/shared (it is bundled), no dev tools', () => {
    const installed = installedPackages(path.join(app, 'node_modules'));
    const allowed = runtimeClosure(Object.keys(agentManifest.dependencies));
    allowed.add('@spectator/agent');
    expect(installed.filter((name) => !allowed.has(name))).toEqual([]);
    expect(installed).toEqual(expect.arrayContaining(Object.keys(agentManifest.dependencies)));
    expect(fs.readdirSync(path.join(app, 'node_modules/@spectator/agent')).sort()).toEqual([
      'bin',
      'dist',
      'index.js',
      'package.json',
    ]);
  });

  it('runs `spectator-agent --version` by name', () => {
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' })).toBe(`${agentManifest.version}\n`);
  });

  it('proxies a request to an app and stops on SIGTERM', () => proxiesAndStops(bin, work));

  it('works as a library too (require)', () => {
    const exported = execFileSync(
      process.execPath,
      ['-e', "console.log(typeof require('@spectator/agent').startAgent)"],
      { cwd: app, encoding: 'utf8' },
    );
    expect(exported).toBe('function\n');
  });
});

// What Dockerfile.agent puts in the image: the one file of `node bundle.js image`, alone in a folder
// (no node_modules anywhere above it), run by the same wrapper as the image's `spectator-agent`.
describe("the image's one-file agent, alone", () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-agent-image-'));
  const file = path.join(work, 'spectator-agent.cjs');
  const bin = path.join(work, 'spectator-agent');

  beforeAll(() => {
    execFileSync(process.execPath, ['bundle.js', 'image', file], { cwd: path.join(REPO_ROOT, 'agent') });
    fs.writeFileSync(bin, `#!/bin/sh\nexec node ${file} "$@"\n`, { mode: 0o755 });
  }, 120_000);

  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  it('runs `--version`', () => {
    const { version } = JSON.parse(readRepoFile('agent/package.json')) as { version: string };
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' })).toBe(`${version}\n`);
  });

  it('proxies a request to an app and stops on SIGTERM', () => proxiesAndStops(bin, work));
});
