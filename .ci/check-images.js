// @ts-check
/* global fetch, setTimeout, clearTimeout -- Node globals the shared ESLint config does not list for .js */
// Runs the entrypoints inside the images that .ci/images built and checks what the Dockerfiles
// promise: a non-root user, the agent proxying a request, the backend answering /api/v1/health
// against a real PostgreSQL, and each image's HEALTHCHECK command passing. `buildah run
// --isolation chroot` shares the machine's network, so 127.0.0.1 inside is the machine's; every
// port is a free one picked here. With --node <binary>, the same checks run the repository's
// build (agent/dist, backend/dist) on that Node.js instead (another supported version).
//   node .ci/check-images.js <agent image> <backend image>
//   node .ci/check-images.js --node <path to node>
const { execFileSync, spawn } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
// The backend's own helpers (its build, which npm ci's prepare made): a loopback port free right now,
// and a start on one, again on another while the port was taken meanwhile.
const { freePort, onFreePort } = require('../backend/dist/src/database/embedded.js');

/** @type {(() => void)[]} */
const cleanups = [];

/**
 * @param {string} what
 * @param {boolean} ok
 * @param {string} [detail]
 */
function check(what, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}`);
  if (!ok) throw new Error(`check failed: ${what}`);
}

/**
 * A working container of `image`; removed at the end.
 * @param {string} image
 */
function container(image) {
  const id = execFileSync('buildah', ['from', '--quiet', image], { encoding: 'utf8' }).trim();
  cleanups.push(() => execFileSync('buildah', ['rm', id], { stdio: 'ignore' }));
  return id;
}

/**
 * The image's Docker config (User, Env, Entrypoint, Healthcheck).
 * @param {string} image
 * @returns {{ User?: string; Entrypoint?: string[]; Healthcheck?: { Test?: string[] } }}
 */
function imageConfig(image) {
  return JSON.parse(execFileSync('buildah', ['inspect', '--type', 'image', image], { encoding: 'utf8' })).Docker.config;
}

/**
 * Where a program runs: in a working container of an image (buildah run), or on the machine with
 * a given Node.js binary.
 * @typedef {object} Runner
 * @property {string} name
 * @property {(env: Record<string, string>, command: string[]) => string[]} argv `[program, ...args]` that runs `command`
 * @property {string[]} entrypoint the program's command (the image's ENTRYPOINT)
 */

/**
 * @param {string} image
 * @returns {Runner}
 */
function imageRunner(image) {
  const id = container(image);
  return {
    name: image,
    argv: (env, command) => [
      'buildah',
      'run',
      '--isolation',
      'chroot',
      ...Object.entries(env).flatMap(([key, value]) => ['--env', `${key}=${value}`]),
      id,
      '--',
      ...command,
    ],
    entrypoint: imageConfig(image).Entrypoint ?? [],
  };
}

/**
 * Runs a command to its end; resolves with its exit code and output.
 * @param {Runner} runner
 * @param {Record<string, string>} env
 * @param {string[]} command
 * @returns {Promise<{ code: number | null; output: string }>}
 */
function runToEnd(runner, env, command) {
  return new Promise((resolve) => {
    const [program, ...args] = runner.argv(env, command);
    const child = spawn(/** @type {string} */ (program), args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.trim() });
    });
  });
}

/**
 * The processes whose environment holds `mark`.
 * @param {string} mark
 * @returns {number[]}
 */
function marked(mark) {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return fs.readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(mark) ? [Number(entry)] : [];
    } catch {
      return []; // gone, or not ours to read
    }
  });
}

/**
 * Stops what is left of a command (SIGTERM, SIGKILL after 5 s) and says so when something was.
 * @param {string} mark
 */
async function stopMarked(mark) {
  const left = marked(mark);
  if (left.length === 0) return;
  console.log(`check-images: stopping ${left.length} process(es) the command left: ${left.join(', ')}`);
  const signal = (/** @type {number} */ pid, /** @type {NodeJS.Signals} */ name) => {
    try {
      process.kill(pid, name);
    } catch {
      // it ended meanwhile
    }
  };
  for (const pid of left) signal(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (marked(mark).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const pid of marked(mark)) signal(pid, 'SIGKILL');
}

/**
 * Starts a long-running command (its own process group, stopped at the end).
 * @param {Runner} runner
 * @param {Record<string, string>} env
 * @param {string[]} command
 */
function startIn(runner, env, command) {
  // A mark in the command's environment: `buildah run --isolation chroot` does not pass a signal to
  // the group on to the image's process, so what the command started is found by it and stopped.
  const mark = `CHECK_IMAGES_RUN=${crypto.randomUUID()}`;
  const [key, value] = mark.split('=');
  env = { ...env, [String(key)]: String(value) };
  const [program, ...args] = runner.argv(env, command);
  const child = spawn(/** @type {string} */ (program), args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, ...env },
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  /** @type {number | string | undefined} */
  let exitCode;
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal ?? 'unknown';
      resolve(code);
    }),
  );
  const stop = async () => {
    try {
      process.kill(-(/** @type {number} */ (child.pid)), 'SIGTERM');
    } catch {
      return;
    }
    const killer = setTimeout(() => process.kill(-(/** @type {number} */ (child.pid)), 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
    await stopMarked(mark);
  };
  cleanups.push(() => void stop());
  return { output: () => output, exited, exitCode: () => exitCode, stop };
}

/** A command exited before what was waited for; `output` is what it said. */
class ExitedFirst extends Error {
  /**
   * @param {string} what
   * @param {number | string} code
   * @param {string} output
   */
  constructor(what, code, output) {
    super(`the command exited (${code}) before ${what}`);
    this.output = output;
  }
}

/**
 * Starts a long-running command (startIn) with the env `envOf` makes around a free port and waits
 * for `probe` (waitFor; it fails at once when the command exits). Another process can take a port
 * between `freePort` and the command's listen: when the command exited saying EADDRINUSE, it is
 * started again on other free ports (the backend's `onFreePort`). Prints its output when it fails.
 * @template T
 * @param {Runner} runner
 * @param {(port: number) => Promise<Record<string, string>>} envOf
 * @param {string[]} command
 * @param {string} what
 * @param {(env: Record<string, string>) => Promise<T>} probe
 * @param {number} ms
 * @returns {Promise<{ env: Record<string, string>; started: ReturnType<typeof startIn>; value: T }>}
 */
function startWaiting(runner, envOf, command, what, probe, ms) {
  return onFreePort(
    async (/** @type {number} */ port) => {
      const env = await envOf(port);
      const started = startIn(runner, env, command);
      try {
        return { env, started, value: await waitFor(what, () => probe(env), ms, started) };
      } catch (err) {
        console.log(started.output());
        await started.stop();
        throw err;
      }
    },
    (/** @type {unknown} */ err) => err instanceof ExitedFirst && err.output.includes('EADDRINUSE'),
    {
      onTaken: (/** @type {number} */ port, /** @type {number} */ attempt) =>
        console.log(`check-images: a port was taken (${port}, attempt ${attempt}): starting again on others`),
    },
  );
}

/**
 * Polls `probe` until it returns a truthy value, for at most `ms`; when `started` is given, fails
 * as soon as that command exits (ExitedFirst).
 * @template T
 * @param {string} what
 * @param {() => Promise<T>} probe
 * @param {number} ms
 * @param {{ exitCode: () => number | string | undefined; output: () => string }} [started]
 * @returns {Promise<T>}
 */
async function waitFor(what, probe, ms, started) {
  const deadline = Date.now() + ms;
  for (;;) {
    // A probe is given 5 s: fetch from a peer that closes at once (another process on the port) never settles.
    const value = await Promise.race([
      probe().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 5_000, undefined)),
    ]);
    if (value) return /** @type {T} */ (value);
    const code = started?.exitCode();
    if (started && code !== undefined) throw new ExitedFirst(what, code, started.output());
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The HEALTHCHECK's command (`CMD` form) of an image.
 * @param {{ Healthcheck?: { Test?: string[] } }} config
 */
function healthcheckCommand(config) {
  const test = config.Healthcheck?.Test ?? [];
  check('HEALTHCHECK is set (exec form)', test[0] === 'CMD' && test.length > 1, JSON.stringify(test));
  return test.slice(1);
}

/**
 * The agent's env: it listens on `port`, its admin on another free port.
 * @param {number} port
 */
async function agentEnv(port) {
  return {
    SPECTATOR_LISTEN: `127.0.0.1:${port}`,
    SPECTATOR_ADMIN: `127.0.0.1:${await freePort()}`,
    SPECTATOR_CONFIG: '/nonexistent/service.yml',
  };
}

/**
 * The agent proxies a request to an app on the machine, and (in an image) its HEALTHCHECK passes.
 * @param {Runner} runner
 * @param {string[] | null} healthcheck
 */
async function checkAgent(runner, healthcheck) {
  const upstream = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, from: 'upstream' }));
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', () => resolve(undefined)));
  cleanups.push(() => upstream.close());
  const {
    env,
    started: agent,
    value: answer,
  } = await startWaiting(
    runner,
    agentEnv,
    [
      ...runner.entrypoint,
      '--upstream',
      `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (upstream.address()).port}`,
    ],
    'the agent to proxy',
    (env) => fetch(`http://${env.SPECTATOR_LISTEN}/users/7`).then((r) => (r.status === 200 ? r.json() : undefined)),
    30_000,
  );
  check(
    `${runner.name}: the agent proxies a request`,
    JSON.stringify(answer) === JSON.stringify({ path: '/users/7', from: 'upstream' }),
    JSON.stringify(answer),
  );
  if (healthcheck) {
    const health = await runToEnd(runner, env, healthcheck);
    check(`${runner.name}: HEALTHCHECK passes`, health.code === 0, `exit ${health.code}`);
  }
  await agent.stop();
}

/**
 * A process's parent pid and state, from /proc; null once it is gone.
 * @param {number} pid
 * @returns {{ ppid: number; state: string } | null}
 */
function procStatus(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      ppid: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]),
      state: /^State:\s+(\S)/m.exec(status)?.[1] ?? '?',
    };
  } catch {
    return null;
  }
}

/**
 * Pids of the processes whose command line is exactly `argv`.
 * @param {string[]} argv
 * @returns {number[]}
 */
function pidsOf(argv) {
  const wanted = `${argv.join('\0')}\0`;
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === wanted;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * The image's init (tini, its ENTRYPOINT's first program) adopts what a wrapped command leaves
 * behind and reaps it, and passes SIGTERM on to the agent, which stops its app and exits 0.
 * `buildah run --isolation chroot` shares the machine's process namespace, so tini is not PID 1
 * here: `-s` (subreaper) is what makes it the orphans' parent, as PID 1 is in a container.
 * @param {Runner} runner
 */
async function checkInit(runner) {
  check(
    `${runner.name}: the ENTRYPOINT starts tini`,
    runner.entrypoint[0] === '/usr/bin/tini',
    runner.entrypoint.join(' '),
  );
  // A unique duration names the orphan: the subshell that started it exits at once.
  const orphan = ['sleep', `4.${crypto.randomInt(100, 999)}`];
  const app = "require('http').createServer((q,s)=>s.end('ok')).listen(process.env.PORT,'127.0.0.1')";
  // The agent listens (both ports) before it starts the command: an orphan means its ports were free.
  const {
    env,
    started: agent,
    value: pid,
  } = await startWaiting(
    runner,
    agentEnv,
    [...runner.entrypoint, '--', 'sh', '-c', `(${orphan.join(' ')} &); exec node -e "${app}"`],
    'the orphan to start',
    async () => pidsOf(orphan)[0],
    30_000,
  );
  const parent = procStatus(pid)?.ppid ?? 0;
  const parentArgv = fs.readFileSync(`/proc/${parent}/cmdline`, 'utf8').split('\0');
  check(
    `${runner.name}: tini adopts a process the wrapped command orphaned`,
    parentArgv[0] === '/usr/bin/tini',
    parentArgv.join(' '),
  );
  await waitFor('the orphan to be reaped', async () => procStatus(pid) === null, 15_000).catch((err) => {
    check(`${runner.name}: tini reaps the orphan`, false, `state ${procStatus(pid)?.state}`);
    throw err;
  });
  check(`${runner.name}: tini reaps the orphan once it exits`, true);
  await waitFor('the app behind the agent', () => fetch(`http://${env.SPECTATOR_LISTEN}/`).then((r) => r.ok), 30_000);
  process.kill(parent, 'SIGTERM');
  const code = await Promise.race([
    agent.exited,
    new Promise((resolve) => setTimeout(() => resolve('timeout'), 20_000)),
  ]);
  check(
    `${runner.name}: SIGTERM to tini stops the agent cleanly`,
    code === 0 && /agent stopped/.test(agent.output()),
    `exit ${code}`,
  );
}

/**
 * The backend answers /api/v1/health against a PostgreSQL of its own, and (in an image) its HEALTHCHECK passes.
 * @param {Runner} runner
 * @param {string[] | null} healthcheck
 */
async function checkBackend(runner, healthcheck) {
  // The embedded PostgreSQL the tests use, run as a child and stopped at the end.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-image-pg-'));
  // The postgres system user (we may run as root) must reach the cluster inside.
  fs.chmodSync(dataDir, 0o755);
  const postgres = spawn(
    process.execPath,
    [
      '-r',
      path.join(ROOT, 'agent/test/support/register.js'),
      path.join(ROOT, 'backend/test/support/postgres-process.ts'),
      path.join(dataDir, 'pg'),
      String(await freePort()),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const postgresExited = new Promise((resolve) => postgres.once('exit', resolve));
  cleanups.push(() => {
    postgres.stdin.end();
    void postgresExited.then(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  });
  const databaseUrl = await new Promise((resolve, reject) => {
    postgres.stdout.once('data', (d) =>
      resolve(/** @type {{ url: string }} */ (JSON.parse(String(d).split('\n')[0] ?? '')).url),
    );
    void postgresExited.then((code) => reject(new Error(`PostgreSQL exited (${code})`)));
  });
  const {
    env,
    started: backend,
    value: health,
  } = await startWaiting(
    runner,
    async (port) => ({
      DATABASE_URL: String(databaseUrl),
      PORT: String(port),
      HOST: '127.0.0.1',
      SPECTATOR_ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
      SPECTATOR_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-image-data-')),
    }),
    runner.entrypoint,
    'the backend to answer /api/v1/health',
    (env) => fetch(`http://127.0.0.1:${env.PORT}/api/v1/health`).then((r) => (r.status === 200 ? r.json() : undefined)),
    60_000,
  );
  check(
    `${runner.name}: the backend answers /api/v1/health against PostgreSQL`,
    JSON.stringify(health) === JSON.stringify({ status: 'ok', database: 'ok' }),
    JSON.stringify(health),
  );
  if (healthcheck) {
    const result = await runToEnd(runner, env, healthcheck);
    check(`${runner.name}: HEALTHCHECK passes`, result.code === 0, `exit ${result.code}`);
  }
  await backend.stop();
}

/**
 * @param {string} image
 * @param {(runner: Runner, healthcheck: string[] | null) => Promise<void>} checks
 */
async function checkImage(image, checks) {
  const config = imageConfig(image);
  const runner = imageRunner(image);
  const { output } = await runToEnd(runner, {}, ['id', '-u']);
  check(
    `${image}: runs as a non-root user`,
    config.User !== undefined && !['', 'root', '0'].includes(config.User) && output !== '0',
    `USER ${config.User}, uid ${output}`,
  );
  await checks(runner, healthcheckCommand(config));
}

/**
 * The repository's build run by another Node.js binary.
 * @param {string} node
 * @param {string} entry file relative to the repository root
 * @returns {Runner}
 */
function nodeRunner(node, entry) {
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  return {
    name: `Node ${version} ${entry}`,
    argv: (_env, command) => command,
    entrypoint: [node, path.join(ROOT, entry)],
  };
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--node' && args[1]) {
    await checkAgent(nodeRunner(args[1], 'agent/dist/src/cli.js'), null);
    await checkBackend(nodeRunner(args[1], 'backend/dist/src/main.js'), null);
    return;
  }
  const [agentImage, backendImage] = args;
  if (!agentImage || !backendImage)
    throw new Error('usage: node .ci/check-images.js <agent image> <backend image> | --node <path to node>');
  await checkImage(agentImage, async (runner, healthcheck) => {
    await checkAgent(runner, healthcheck);
    await checkInit(runner);
  });
  await checkImage(backendImage, checkBackend);
}

main().then(
  () => {
    for (const cleanup of cleanups.reverse()) cleanup();
  },
  (err) => {
    console.error(`check-images: ${err instanceof Error ? err.message : String(err)}`);
    for (const cleanup of cleanups.reverse()) {
      try {
        cleanup();
      } catch {
        // keep cleaning
      }
    }
    process.exitCode = 1;
  },
);
