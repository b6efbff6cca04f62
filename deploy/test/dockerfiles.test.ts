import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { builtinModules } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseAgentConfig } from '@spectator/agent';
// The config module alone: the backend's index loads NestJS, which this project does not transform.
import { parseConfig } from '../../backend/src/config/config';
import {
  copyPaths,
  effectiveUser,
  exposedPorts,
  instructionsOf,
  isDockerIgnored,
  npmCommands,
  parseDockerfile,
  runCommands,
  stageEnv,
  type Dockerfile,
  type Stage,
} from './support/dockerfile';
import { packageScripts, readRepoFile, REPO_ROOT, repoPathExists, workspaceFolders } from './support/repo';

interface ImageExpectation {
  file: string;
  /** The ports the program listens on with the image's environment, read by its own parser, and the hosts. */
  listens: (env: Record<string, string>) => { ports: number[]; hosts: string[] };
  /** The command on the image's PATH that is its ENTRYPOINT. */
  bin: string;
  /** Source of the file the command runs (compiled to `<pkg>/dist/src/<name>.js`, or the entry of a one-file build). */
  source: string;
  /** Workspaces whose code (and production dependencies, unless bundled) the image needs. */
  workspaces: string[];
  /**
   * The program is one file built by esbuild with every dependency inside (no node_modules in the
   * image): the npm script that builds it, and the file it writes, relative to the workspace.
   */
  bundle?: { workspace: string; script: string; output: string };
  ports: number[];
  healthPath: string;
  /** Environment that points the HEALTHCHECK at a port. */
  healthEnv: (port: number) => Record<string, string>;
}

const IMAGES: ImageExpectation[] = [
  {
    file: 'Dockerfile.agent',
    listens: (env) => {
      const config = parseAgentConfig(['--upstream', 'http://127.0.0.1:8080'], env);
      return { ports: [config.listen.port, config.admin!.port], hosts: [config.listen.host, config.admin!.host] };
    },
    bin: 'spectator-agent',
    source: 'agent/src/package.ts',
    workspaces: ['@spectator/shared', '@spectator/agent'],
    bundle: { workspace: '@spectator/agent', script: 'bundle:image', output: 'dist/image/spectator-agent.cjs' },
    ports: [4000, 4001],
    healthPath: '/healthz',
    healthEnv: (port) => ({ SPECTATOR_ADMIN: `127.0.0.1:${port}` }),
  },
  {
    file: 'Dockerfile.backend',
    listens: (env) => {
      const config = parseConfig({ ...env, DATABASE_URL: 'postgres://u:p@db:5432/spectator' });
      return { ports: [config.port], hosts: [config.host] };
    },
    bin: 'spectator-backend',
    source: 'backend/src/main.ts',
    workspaces: ['@spectator/shared', '@spectator/backend'],
    ports: [3000],
    healthPath: '/api/v1/health',
    healthEnv: (port) => ({ PORT: String(port) }),
  },
];

const dockerignore = readRepoFile('.dockerignore').split('\n');

/** Packages imported at run time (type-only imports apart) by the non-test sources of a workspace folder. */
function runtimeImports(folder: string): Set<string> {
  const files = fs
    .readdirSync(path.join(REPO_ROOT, folder, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file) && !/\.spec\.tsx?$/.test(file));
  const packages = new Set<string>();
  for (const file of files) {
    const source = fs.readFileSync(path.join(REPO_ROOT, folder, 'src', file), 'utf8');
    for (const match of source.matchAll(
      /^\s*(?:import(?!\s+type\b)[^'"]*?from\s*|import\s*|export(?!\s+type\b)[^'"]*?from\s*)['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)/gm,
    )) {
      const specifier = match[1] ?? match[2]!;
      if (
        specifier.startsWith('.') ||
        specifier.startsWith('node:') ||
        builtinModules.includes(specifier.split('/')[0]!)
      )
        continue;
      packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
    }
  }
  return packages;
}

/** The production dependencies of workspaces, and the workspaces themselves. */
function productionPackages(workspaces: readonly string[]): Set<string> {
  const folders = workspaceFolders();
  return new Set(
    workspaces.flatMap((workspace) => [
      workspace,
      ...Object.keys(
        (JSON.parse(readRepoFile(`${folders.get(workspace)}/package.json`)) as { dependencies?: object })
          .dependencies ?? {},
      ),
    ]),
  );
}

function finalStage(dockerfile: Dockerfile): Stage {
  return dockerfile.stages.at(-1)!;
}

/** Runs the HEALTHCHECK command of an image against a local server answering `status`. */
async function runHealthcheck(
  image: ImageExpectation,
  stage: Stage,
  status: number | 'closed',
): Promise<{ code: number; requested: string[] }> {
  const command = instructionsOf(stage, 'HEALTHCHECK')[0]!.exec!;
  const requested: string[] = [];
  const server = http.createServer((req, res) => {
    requested.push(req.url ?? '');
    res.writeHead(status === 'closed' ? 500 : status).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  if (status === 'closed') await new Promise<void>((resolve) => server.close(() => resolve()));
  try {
    const [program, ...args] = command;
    expect(program).toBe('node');
    const env = { PATH: process.env.PATH ?? '', ...stageEnv(stage), ...image.healthEnv(port) };
    const code = await new Promise<number>((resolve) => {
      execFile(process.execPath, args, { env, timeout: 10_000 }, (error) =>
        resolve(error ? Number(error.code ?? 1) : 0),
      );
    });
    return { code, requested };
  } finally {
    if (status !== 'closed') await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe.each(IMAGES)('$file', (image) => {
  const dockerfile = parseDockerfile(readRepoFile(image.file));
  const final = finalStage(dockerfile);
  const stageNames = dockerfile.stages.map((stage) => stage.name);

  it('is multi-stage and ends on a slim Node LTS image pinned by digest, which a build argument can replace', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    // CI passes a base image it made itself (.ci/images); every stage not built on another stands on it.
    expect(final.base).toBe('${NODE_IMAGE}');
    for (const stage of dockerfile.stages.filter((each) => !stageNames.includes(each.base)))
      expect(stage.base).toBe('${NODE_IMAGE}');
    const declared = dockerfile.globalArgs.map((arg) => /^NODE_IMAGE=(\S+)$/.exec(arg.args)?.[1]).find(Boolean);
    expect(declared).toMatch(/^node:(22|24)(\.\d+)*-(bookworm-slim|slim)@sha256:[0-9a-f]{64}$/);
  });

  it('builds FROM and COPY --from only stages defined above', () => {
    dockerfile.stages.forEach((stage, index) => {
      const earlier = stageNames.slice(0, index);
      if (stageNames.includes(stage.base)) expect(earlier).toContain(stage.base);
      for (const copy of instructionsOf(stage, 'COPY').filter((instruction) => instruction.flags.from)) {
        expect(earlier).toContain(copy.flags.from);
      }
    });
  });

  it('copies from the build context only files that exist and are not dockerignored', () => {
    const sources = dockerfile.stages.flatMap((stage) =>
      instructionsOf(stage, 'COPY')
        .filter((instruction) => !instruction.flags.from)
        .flatMap((instruction) => copyPaths(instruction).sources),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect({ source, exists: repoPathExists(source), ignored: isDockerIgnored(dockerignore, source) }).toEqual({
        source,
        exists: true,
        ignored: false,
      });
    }
  });

  it('keeps local installs and builds out of the build context', () => {
    for (const local of [
      'node_modules',
      'agent/node_modules',
      'agent/dist',
      'backend/dist/src/main.js',
      '.spectator',
      '.git',
      'shared/tsconfig.tsbuildinfo',
    ]) {
      expect({ local, ignored: isDockerIgnored(dockerignore, local) }).toEqual({ local, ignored: true });
    }
  });

  it('runs only npm scripts and workspaces that exist', () => {
    const folders = workspaceFolders();
    const commands = dockerfile.stages.flatMap(npmCommands);
    expect(commands.map((command) => command.command)).toContain('ci');
    for (const command of commands) {
      for (const workspace of command.workspaces)
        expect({ workspace, known: folders.has(workspace) }).toEqual({ workspace, known: true });
      if (command.script === null) continue;
      const folder = command.workspaces.length === 0 ? '' : folders.get(command.workspaces[0]!)!;
      expect({ command: command.text, defined: command.script in packageScripts(folder) }).toEqual({
        command: command.text,
        defined: true,
      });
    }
  });

  it(
    image.bundle
      ? 'holds no node_modules: its program is one file'
      : 'installs only the production dependencies of the workspaces it runs',
    () => {
      if (image.bundle) {
        const { workspace, script, output } = image.bundle;
        expect(
          dockerfile.stages.flatMap(npmCommands).filter((command) => command.flags.includes('--omit=dev')),
        ).toEqual([]);
        const build = dockerfile.stages.find((stage) => stage.name === 'build')!;
        expect(npmCommands(build).map((command) => command.text)).toContain(`npm run ${script} -w ${workspace}`);
        // The final stage takes from the build stage only the file that script writes.
        const fromBuild = instructionsOf(final, 'COPY').filter((instruction) => instruction.flags.from === 'build');
        expect(fromBuild.flatMap((copy) => copyPaths(copy).sources)).toEqual([
          path.posix.join('/app', workspaceFolders().get(workspace)!, output),
        ]);
        return;
      }
      const dependencyStages = dockerfile.stages.filter((stage) =>
        npmCommands(stage).some((command) => command.flags.includes('--omit=dev')),
      );
      expect(dependencyStages).toHaveLength(1);
      const install = npmCommands(dependencyStages[0]!).find((command) => command.command === 'ci')!;
      expect(install.workspaces.sort()).toEqual([...image.workspaces].sort());
      // The final stage takes node_modules from that stage, never from the build stage (dev tools).
      const fromBuild = instructionsOf(final, 'COPY').filter(
        (instruction) =>
          instruction.flags.from && ![dependencyStages[0]!.name, 'init'].includes(instruction.flags.from),
      );
      for (const copy of fromBuild) {
        for (const source of copyPaths(copy).sources) expect(source).toMatch(/\/dist(\/src)?$/);
      }
    },
  );

  it('holds every package its code imports at run time', () => {
    if (image.bundle) {
      // The one file requires only Node's own modules, and ws's optional helpers (it runs without them).
      const folder = workspaceFolders().get(image.bundle.workspace)!;
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-bundle-')), 'bundle.cjs');
      execFileSync(process.execPath, ['bundle.js', 'image', file], { cwd: path.join(REPO_ROOT, folder) });
      const bundled = fs.readFileSync(file, 'utf8');
      fs.rmSync(path.dirname(file), { recursive: true });
      const required = [...new Set([...bundled.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]!))];
      expect(required.filter((name) => !name.startsWith('node:') && !builtinModules.includes(name))).toEqual(
        ['bufferutil', 'utf-8-validate'].filter((name) => required.includes(name)),
      );
      expect(required.length).toBeGreaterThan(0);
      return;
    }
    const installed = productionPackages(image.workspaces);
    const imported = [
      ...new Set(image.workspaces.flatMap((workspace) => [...runtimeImports(workspaceFolders().get(workspace)!)])),
    ];
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.filter((name) => !installed.has(name))).toEqual([]);
  });

  it('runs as a non-root user', () => {
    expect(['root', '0', '']).not.toContain(effectiveUser(final));
  });

  it(`exposes ${image.ports.join(' and ')}, where its program listens on all interfaces with the image's environment`, () => {
    expect(exposedPorts(final).sort()).toEqual(image.ports);
    const { ports, hosts } = image.listens(stageEnv(final));
    expect(ports).toEqual(image.ports);
    expect(new Set(hosts)).toEqual(new Set(['0.0.0.0']));
  });

  it(`has ENTRYPOINT tini, then ${image.bin}, a command on the PATH that runs the built ${image.source}`, () => {
    // Debian's tini, from a stage of its own, is PID 1: signals reach the program, orphans are reaped.
    expect(instructionsOf(final, 'ENTRYPOINT').at(-1)?.exec).toEqual(['/usr/bin/tini', '-s', '--', image.bin]);
    const init = dockerfile.stages.find((stage) => stage.name === 'init')!;
    expect(runCommands(init).join(' && ')).toMatch(/apt-get install -y --no-install-recommends tini\b/);
    expect(
      instructionsOf(final, 'COPY')
        .filter((copy) => copy.flags.from === 'init')
        .map((copy) => copyPaths(copy)),
    ).toEqual([{ sources: ['/usr/bin/tini'], destination: '/usr/bin/tini' }]);
    const writesBin = instructionsOf(final, 'RUN').find((instruction) =>
      instruction.args.includes(`/usr/local/bin/${image.bin}`),
    );
    expect(writesBin).toBeDefined();
    const compiled = /exec node (\/app\/(\S+))\s/.exec(writesBin!.args.replace(/\\n/g, '\n'));
    expect(compiled).not.toBeNull();
    if (image.bundle) {
      // The one file, copied to /app, is what the bundle script builds from its entry.
      const folder = workspaceFolders().get(image.bundle.workspace)!;
      expect(readRepoFile(path.join(folder, 'bundle.js'))).toContain(`'src/${path.basename(image.source)}'`);
      expect(packageScripts(folder)[image.bundle.script]).toBe('node bundle.js image');
      expect(compiled![1]).toBe(`/app/${path.basename(image.bundle.output)}`);
      expect(
        instructionsOf(final, 'COPY').some((copy) => copyPaths(copy).sources[0]!.endsWith(image.bundle!.output)),
      ).toBe(true);
      return;
    }
    const [pkg, ...rest] = compiled![2]!
      .replace(/^(\w+)\/dist\//, '$1/')
      .replace(/\.js$/, '.ts')
      .split('/');
    expect(path.posix.join(pkg!, ...rest)).toBe(image.source);
    expect(repoPathExists(image.source)).toBe(true);
    // The compiled folder is copied into the final stage under WORKDIR /app.
    expect(instructionsOf(final, 'WORKDIR').at(-1)?.args).toBe('/app');
    const copiedTo = instructionsOf(final, 'COPY').map((instruction) => `/app/${copyPaths(instruction).destination}`);
    expect(copiedTo.some((destination) => compiled![1]!.startsWith(`${destination.replace(/\/$/, '')}/`))).toBe(true);
  });

  it(`has a HEALTHCHECK that passes on a 200 from ${image.healthPath} and fails otherwise`, async () => {
    expect(instructionsOf(final, 'HEALTHCHECK')).toHaveLength(1);
    const healthy = await runHealthcheck(image, final, 200);
    expect(healthy).toEqual({ code: 0, requested: [image.healthPath] });
    expect((await runHealthcheck(image, final, 503)).code).not.toBe(0);
    expect((await runHealthcheck(image, final, 'closed')).code).not.toBe(0);
  });
});

describe('build commands', () => {
  // `npm start` builds with BUILD_STEPS; the images must build the same way, and CI's type-check
  // must run the same tsc -b, so a green CI means the images' build commands pass.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { BUILD_STEPS } = require('../start/build.js') as { BUILD_STEPS: { command: string[] }[] };
  const startCommands = BUILD_STEPS.map((step) => step.command.join(' '));
  const buildCommands = (file: string): string[] =>
    runCommands(parseDockerfile(readRepoFile(file)).stages.find((stage) => stage.name === 'build')!).filter((command) =>
      /^(npx tsc|npm run) /.test(command),
    );

  it('the backend image builds exactly what `npm start` builds', () => {
    expect(buildCommands('Dockerfile.backend')).toEqual(startCommands);
  });

  it('the agent image builds only its one file, with the script the package tests use', () => {
    expect(buildCommands('Dockerfile.agent')).toEqual(['npm run bundle:image -w @spectator/agent']);
  });

  it("is what CI's type-check compiles", () => {
    expect(startCommands[0]).toMatch(/^npx tsc -b /);
    expect(packageScripts('').typecheck).toContain(startCommands[0]!.replace(/^npx /, ''));
    // npm test (scripts/test.js) runs that step first, then jest with the typecheck and lint beside it.
    expect(packageScripts('').test).toBe('node scripts/test.js');
    const runner = readRepoFile('scripts/test.js');
    expect(runner).toContain("require('../deploy/start/build.js').BUILD_STEPS[0].command");
    expect(runner).toContain("'npm run typecheck && npm run lint'");
  });
});

describe('parseDockerfile', () => {
  it('joins continuations, skips comments and reads stages, flags and exec forms', () => {
    const parsed = parseDockerfile(
      [
        '# comment',
        'FROM node:20 AS build',
        'RUN a \\',
        '  # inside',
        '  && b',
        '',
        'FROM node:20-slim',
        'COPY --from=build /x y',
        'CMD ["node", "x.js"]',
      ].join('\n'),
    );
    expect(parsed.stages.map((stage) => [stage.name, stage.base])).toEqual([
      ['build', 'node:20'],
      ['1', 'node:20-slim'],
    ]);
    expect(parsed.stages[0]!.instructions[0]).toMatchObject({ keyword: 'RUN', args: 'a && b', line: 3 });
    expect(parsed.stages[1]!.instructions[0]).toMatchObject({
      keyword: 'COPY',
      flags: { from: 'build' },
      args: '/x y',
    });
    expect(parsed.stages[1]!.instructions[1]!.exec).toEqual(['node', 'x.js']);
  });

  it.each([
    ['FROM node:20\nFOO bar', /line 2: unknown instruction "FOO"/],
    ['RUN x', /line 1: RUN before the first FROM/],
    ['FROM node:20\nCMD ["node", 1]', /line 2: CMD exec form/],
    ['FROM node:20\nRUN a \\', /ends inside a continuation/],
    ['# nothing', /no FROM/],
  ])('refuses %j with a clear error', (text, message) => {
    expect(() => parseDockerfile(text)).toThrow(message);
  });

  it('matches .dockerignore patterns like Docker (last match wins, ! re-includes)', () => {
    const patterns = ['**/dist', '*.md', '!README.md'];
    expect(isDockerIgnored(patterns, 'agent/dist/src/cli.js')).toBe(true);
    expect(isDockerIgnored(patterns, 'dist')).toBe(true);
    expect(isDockerIgnored(patterns, 'agent/distance.ts')).toBe(false);
    expect(isDockerIgnored(patterns, 'CHANGES.md')).toBe(true);
    expect(isDockerIgnored(patterns, 'README.md')).toBe(false);
    expect(isDockerIgnored(patterns, 'docs/x.md')).toBe(false);
  });
});
