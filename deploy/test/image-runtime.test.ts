// The final stage of each image, assembled without Docker: the Dockerfile's own COPY and
// `npm ci --omit=dev …` instructions are carried out in a temporary /app, and the program is run
// from there with the image's environment. This proves the production-only install (or, for the
// agent, its one file) holds what the code loads, which a missing dependency would otherwise show
// only in a container. tini, Debian's, is left to .ci/images, which runs the built images.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { onFreePort } from '../../backend/src/database/embedded';
import { ensureDashboardBuilt } from '../../dashboard/test/support/browser';
import { copyPaths, instructionsOf, parseDockerfile, runCommands, stageEnv, type Stage } from './support/dockerfile';
import { readRepoFile, REPO_ROOT } from './support/repo';

const run = promisify(execFile);

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { buildIfNeeded } = require('../start/build.js') as {
  buildIfNeeded: (root: string, progress: (line: string) => void) => Promise<void>;
};

/** Copies a file or folder, making parents. */
function copy(from: string, to: string): void {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true });
}

/**
 * Carries out a Dockerfile's stages up to the final one in `app` (standing for /app): COPY from
 * the build context, the production-deps stage's `npm ci`, and the final stage's COPY --from=build
 * (the build stage's outputs are the repository's own build, made by the same commands).
 * @returns the final stage
 */
async function assembleFinalStage(file: string, app: string): Promise<Stage> {
  const { stages } = parseDockerfile(readRepoFile(file));
  const final = stages.at(-1)!;
  // The agent's image has no such stage: its program is one file with its dependencies inside.
  const deps = stages.find((stage) => runCommands(stage).some((command) => command.includes('--omit=dev')));
  // The stages the production-deps stage stands on: its base chain.
  const chain: Stage[] = [];
  for (let stage: Stage | undefined = deps; stage; stage = stages.find((candidate) => candidate.name === stage!.base))
    chain.unshift(stage);
  for (const stage of chain) {
    for (const instruction of instructionsOf(stage, 'COPY').filter((candidate) => !candidate.flags.from)) {
      const { sources, destination } = copyPaths(instruction);
      for (const source of sources)
        copy(
          path.join(REPO_ROOT, source),
          path.join(app, destination.endsWith('/') ? path.join(destination, path.basename(source)) : destination),
        );
    }
    for (const command of runCommands(stage).filter((text) => text.startsWith('npm ci'))) {
      // Offline first: the packages are in the cache after the repository's own install.
      await run('sh', ['-c', `${command} --prefer-offline`], { cwd: app, timeout: 180_000 });
    }
  }
  for (const instruction of instructionsOf(final, 'COPY').filter(
    (candidate) => candidate.flags.from && candidate.flags.from !== deps?.name && candidate.flags.from !== 'init',
  )) {
    const { sources, destination } = copyPaths(instruction);
    for (const source of sources)
      copy(
        path.join(REPO_ROOT, path.relative('/app', source)),
        path.join(app, destination.endsWith('/') ? path.join(destination, path.basename(source)) : destination),
      );
  }
  return final;
}

/** The file the image's PATH wrapper (`exec node /app/…`) runs, inside `app`. */
function entryFile(final: Stage, bin: string, app: string): string {
  const wrapper = instructionsOf(final, 'RUN').find((instruction) =>
    instruction.args.includes(`/usr/local/bin/${bin}`),
  )!;
  const target = /exec node \/app\/(\S+)/.exec(wrapper.args)![1]!;
  return path.join(app, target);
}

describe('the images run with production dependencies only', () => {
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-image-'));

  beforeAll(async () => {
    // The build stage's outputs: the dashboard under the browser tests' lock, then tsc -b if stale.
    await ensureDashboardBuilt();
    await buildIfNeeded(REPO_ROOT, () => undefined);
    // The agent image's build stage: `npm run bundle:image -w @spectator/agent`.
    await run('npm', ['run', 'bundle:image', '-w', '@spectator/agent'], { cwd: REPO_ROOT });
  }, 300_000);

  afterAll(() => fs.rmSync(workdir, { recursive: true, force: true }));

  it('agent: answers --version, then serves and passes its own HEALTHCHECK', async () => {
    const app = path.join(workdir, 'agent');
    const final = await assembleFinalStage('Dockerfile.agent', app);
    const entry = entryFile(final, 'spectator-agent', app);
    expect(fs.existsSync(path.join(app, 'node_modules'))).toBe(false);
    const version = await run(process.execPath, [entry, '--version'], { cwd: app });
    expect(version.stdout.trim()).toBe((JSON.parse(readRepoFile('agent/package.json')) as { version: string }).version);

    // The HEALTHCHECK asks the admin port: on a free port, and on another when a process took it
    // before the agent's listen (the agent exits saying EADDRINUSE).
    await onFreePort(
      async (adminPort) => {
        const env = {
          PATH: process.env.PATH ?? '',
          ...stageEnv(final),
          SPECTATOR_LISTEN: '127.0.0.1:0',
          SPECTATOR_ADMIN: `127.0.0.1:${adminPort}`,
          SPECTATOR_LOG_LEVEL: 'warn',
        };
        const agent = spawn(process.execPath, [entry, '--upstream', 'http://127.0.0.1:9'], {
          cwd: app,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        for (const stream of [agent.stdout, agent.stderr])
          stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
        const exited = new Promise((resolve) => {
          agent.once('exit', resolve);
          agent.once('error', resolve);
        });
        try {
          const healthcheck = instructionsOf(final, 'HEALTHCHECK')[0]!.exec!;
          let code = 1;
          for (let attempt = 0; attempt < 50 && code !== 0; attempt++) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            if (agent.exitCode !== null) throw new Error(`the agent exited (${agent.exitCode}): ${output}`);
            // Bounded: a process that took the port may never answer (Docker's HEALTHCHECK has its timeout too).
            code = await run(process.execPath, healthcheck.slice(1), { env, timeout: 5_000 }).then(
              () => 0,
              () => 1,
            );
          }
          expect(code).toBe(0);
          // Its own admin port answered: the agent still runs (one that lost the port exits).
          expect({ running: agent.exitCode === null, output }).toEqual({ running: true, output });
        } finally {
          agent.kill('SIGTERM');
          await exited;
        }
      },
      (error) => String(error).includes('EADDRINUSE'),
    );
  }, 240_000);

  it('backend: loads every module of the service and prints its usage', async () => {
    const app = path.join(workdir, 'backend');
    const final = await assembleFinalStage('Dockerfile.backend', app);
    const entry = entryFile(final, 'spectator-backend', app);
    expect(fs.existsSync(path.join(app, 'node_modules', 'typescript'))).toBe(false);
    expect(fs.existsSync(path.join(app, 'dashboard', 'dist', 'index.html'))).toBe(true);
    // main.js imports the whole service (NestJS, TypeORM, pg, the migrations) before it reads argv.
    const help = await run(process.execPath, [entry, '--help'], {
      cwd: app,
      env: { PATH: process.env.PATH ?? '', ...stageEnv(final) },
    });
    expect(help.stdout).toContain('spectator-backend migrate');
  }, 240_000);
});
