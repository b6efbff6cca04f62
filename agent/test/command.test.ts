import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestAgent } from './support/agent';
import { proxyUrlOf, runCli } from './support/cli';
import { waitFor } from './support/wait';

/**
 * A project folder whose `npm start` runs app.js: it serves its pid on $PORT and, with
 * `helperIgnoresTermMs`, starts a helper process that answers SIGTERM only that long after (or never,
 * with Infinity). Every process appends `<role> <pid>` to the file `pids`, and the helper `helper-exit
 * <pid>` when it leaves by itself.
 */
function makeApp(helperIgnoresTermMs?: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-command-'));
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'app', private: true, scripts: { start: 'node app.js' } }),
  );
  fs.writeFileSync(
    path.join(dir, 'app.js'),
    `const fs = require('node:fs');
     const http = require('node:http');
     fs.appendFileSync(__dirname + '/pids', 'app ' + process.pid + '\\n');
     ${helperIgnoresTermMs === undefined ? '' : `require('node:child_process').spawn(process.execPath, [__dirname + '/helper.js'], { stdio: 'ignore' });`}
     http.createServer((req, res) => res.end(JSON.stringify({ pid: process.pid }))).listen(Number(process.env.PORT), '127.0.0.1');`,
  );
  const linger =
    helperIgnoresTermMs === Infinity
      ? ''
      : `setTimeout(() => { fs.appendFileSync(__dirname + '/pids', 'helper-exit ' + process.pid + '\\n'); process.exit(0); }, ${helperIgnoresTermMs});`;
  fs.writeFileSync(
    path.join(dir, 'helper.js'),
    `const fs = require('node:fs');
     process.on('SIGTERM', () => { ${linger} });
     fs.appendFileSync(__dirname + '/pids', 'helper ' + process.pid + '\\n');
     setInterval(() => {}, 1000);`,
  );
  return dir;
}

/** `[role, pid]` of every process the app folder's processes wrote down. */
function pidsOf(dir: string): [string, number][] {
  const file = path.join(dir, 'pids');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' '))
    .map(([role, pid]) => [role!, Number(pid)]);
}

/** Whether `pid` runs (a zombie waiting for its parent to reap it has ended). */
function running(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function survivors(dir: string): [string, number][] {
  return pidsOf(dir).filter(([role, pid]) => role !== 'helper-exit' && running(pid));
}

const pidOfAnswer = (url: string) =>
  fetch(url)
    .then((r) => (r.status === 200 ? (r.json() as Promise<{ pid: number }>) : null))
    .then((answer) => answer?.pid ?? null)
    .catch(() => null);

describe('the wrapped command (spectator-agent … -- <command>)', () => {
  // The documented CI form: npm → sh -c → node, so the app is the agent's grandchild.
  it('npm start: a restart (SIGHUP) and the agent stopping (SIGTERM) leave no process of the app running', async () => {
    const dir = makeApp();
    let first = 0;
    let second = 0;
    const { code, stdout } = await runCli(
      ['--listen', '127.0.0.1:0', '--config', '/nonexistent.yml', '--', 'npm', '--prefix', dir, 'start'],
      {},
      async (agent, out) => {
        const proxy = await proxyUrlOf(out);
        first = await waitFor('app answering', () => pidOfAnswer(`${proxy}/pid`), 15_000);
        agent.kill('SIGHUP');
        // A new app answers: the old one let go of its port (before, it kept it and every restart died with EADDRINUSE).
        second = await waitFor(
          'restarted app answering',
          async () => {
            const pid = await pidOfAnswer(`${proxy}/pid`);
            return pid !== null && pid !== first ? pid : null;
          },
          15_000,
        );
        expect(running(first)).toBe(false);
        agent.kill('SIGTERM');
      },
    );
    expect(code).toBe(0);
    expect(pidsOf(dir).map(([role, pid]) => [role, pid])).toEqual([
      ['app', first],
      ['app', second],
    ]);
    expect(survivors(dir)).toEqual([]);
    expect(stdout).not.toContain('EADDRINUSE');
  }, 120_000);

  it('sh -c: a helper that answers SIGTERM late gets its time, and the agent waits for it', async () => {
    const dir = makeApp(700);
    const agent = await startTestAgent({
      command: ['sh', '-c', `cd ${dir} && node app.js; echo after`],
      tuning: { shutdownGraceMs: 10_000 },
    });
    await waitFor('app answering', () => pidOfAnswer(`${agent.proxyUrl}/pid`), 10_000);
    await waitFor('helper started', () => pidsOf(dir).some(([role]) => role === 'helper'));
    await agent.close();
    expect(survivors(dir)).toEqual([]);
    // It left by itself after its delay, not by SIGKILL.
    expect(pidsOf(dir).filter(([role]) => role === 'helper-exit')).toHaveLength(1);
  }, 120_000);

  it('a helper that ignores SIGTERM is killed after the grace period', async () => {
    const dir = makeApp(Infinity);
    const agent = await startTestAgent({
      command: ['sh', '-c', `cd ${dir} && node app.js; echo after`],
      tuning: { shutdownGraceMs: 500 },
    });
    await waitFor('app answering', () => pidOfAnswer(`${agent.proxyUrl}/pid`), 10_000);
    await waitFor('helper started', () => pidsOf(dir).some(([role]) => role === 'helper'));
    await agent.close();
    expect(survivors(dir)).toEqual([]);
    expect(pidsOf(dir).filter(([role]) => role === 'helper-exit')).toEqual([]);
  }, 120_000);

  it('when the app exits by itself, what it started is ended before the restart', async () => {
    const dir = makeApp(Infinity);
    const agent = await startTestAgent({
      command: ['sh', '-c', `cd ${dir} && exec node app.js`],
      tuning: { shutdownGraceMs: 500 },
    });
    try {
      const first = await waitFor('app answering', () => pidOfAnswer(`${agent.proxyUrl}/pid`), 10_000);
      const helper = await waitFor('helper started', () => pidsOf(dir).find(([role]) => role === 'helper')?.[1]);
      process.kill(first, 'SIGKILL');
      await waitFor(
        'restarted app answering',
        async () => {
          const pid = await pidOfAnswer(`${agent.proxyUrl}/pid`);
          return pid !== null && pid !== first;
        },
        10_000,
      );
      expect(running(helper)).toBe(false);
    } finally {
      await agent.close();
    }
    expect(survivors(dir)).toEqual([]);
  }, 120_000);
});

describe("the agent's allocator (src/malloc.ts)", () => {
  /** Where Node can restart a process in place (`process.execve`, Node 22.15 / 23.11 and later). */
  const canExec = typeof (process as { execve?: unknown }).execve === 'function';

  it('the CLI runs the agent with glibc’s top pad where Node can; the app it starts does not inherit it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-malloc-'));
    fs.writeFileSync(
      path.join(dir, 'app.js'),
      `require('node:http').createServer((req, res) => res.end(JSON.stringify({
         pad: process.env.MALLOC_TOP_PAD_ ?? null, mark: process.env.SPECTATOR_AGENT_MALLOC ?? null,
       }))).listen(Number(process.env.PORT), '127.0.0.1');`,
    );
    // As started (the CLI restarts itself where it can), and as after that restart (pad and mark set).
    for (const env of [{}, { MALLOC_TOP_PAD_: '16777216', SPECTATOR_AGENT_MALLOC: '1' }]) {
      const { code } = await runCli(
        ['--listen', '127.0.0.1:0', '--config', '/nonexistent.yml', '--', process.execPath, path.join(dir, 'app.js')],
        env,
        async (agent, out) => {
          const proxy = await proxyUrlOf(out);
          // The same process id after the restart: what glibc of this process read.
          const environ = fs.readFileSync(`/proc/${agent.pid}/environ`, 'utf8').split('\0');
          const padded = canExec || 'MALLOC_TOP_PAD_' in env;
          expect(environ.includes('MALLOC_TOP_PAD_=16777216')).toBe(padded);
          const seen = await waitFor(
            'app answering',
            () =>
              fetch(proxy)
                .then((r) => (r.ok ? r.json() : null))
                .catch(() => null),
            15_000,
          );
          expect(seen).toEqual({ pad: null, mark: null });
          agent.kill('SIGTERM');
        },
      );
      expect(code).toBe(0);
    }
  }, 120_000);
});
