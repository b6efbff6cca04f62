import path from 'node:path';
import { parseAgentConfig } from '@spectator/agent';
import { isIgnored, parseServiceConfig } from '@spectator/shared';
import { parse } from 'yaml';
import { readRepoFile, repoPathExists } from './support/repo';

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  network_mode?: string;
  user?: string;
  healthcheck?: { test: string[] };
}

const compose = parse(readRepoFile('deploy/docker-compose.yml')) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const { services } = compose;
const service = (name: string): ComposeService => {
  const found = services[name];
  if (!found) throw new Error(`no service ${name} in deploy/docker-compose.yml`);
  return found;
};

/** A path of the compose file's folder (deploy/) relative to the repository root. */
const fromDeploy = (relative: string): string => path.posix.normalize(path.posix.join('deploy', relative));

/** The bind mount of a service whose target holds `containerPath`, as [source relative to the root, target]. */
function bindMountFor(name: string, containerPath: string): [string, string] {
  for (const volume of service(name).volumes ?? []) {
    const [source, target] = volume.split(':') as [string, string];
    if (source.startsWith('.') && (containerPath === target || containerPath.startsWith(`${target}/`)))
      return [fromDeploy(source), target];
  }
  throw new Error(`${name} mounts nothing at ${containerPath}`);
}

/** The named volume of a service mounted at a folder holding `containerPath`. */
function namedVolumeFor(name: string, containerPath: string): string {
  const volume = (service(name).volumes ?? [])
    .map((entry) => entry.split(':') as [string, string])
    .find(([source, target]) => !source.startsWith('.') && containerPath.startsWith(`${target}/`));
  if (!volume) throw new Error(`${name} has no named volume holding ${containerPath}`);
  return volume[0];
}

describe('deploy/docker-compose.yml', () => {
  it('pins the public images it pulls by digest, their tags beside them', () => {
    const pulled = Object.values(compose.services).filter(
      (each) => each.image !== undefined && each.build === undefined && !each.image.endsWith(':local'),
    );
    expect(pulled.length).toBeGreaterThan(0);
    for (const each of pulled) expect(each.image).toMatch(/^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
  });

  it('builds the backend and agent images from the Dockerfiles at the repository root', () => {
    const builds = Object.values(services).filter((candidate) => candidate.build);
    expect(builds.map((candidate) => candidate.build!.dockerfile).sort()).toEqual([
      'Dockerfile.agent',
      'Dockerfile.backend',
    ]);
    for (const { build } of builds) {
      expect(fromDeploy(build!.context)).toBe('.');
      expect(repoPathExists(build!.dockerfile)).toBe(true);
    }
    // Services that use the backend image without building it come after its build.
    expect([service('backend').image, service('setup').image]).toEqual([
      service('migrate').image,
      service('migrate').image,
    ]);
  });

  it('migrates once, then starts the backend with migrations off, on the same database', () => {
    const postgres = service('postgres').environment!;
    for (const name of ['migrate', 'backend']) {
      const url = new URL(service(name).environment!.DATABASE_URL!);
      expect({
        name,
        host: url.hostname,
        port: url.port,
        user: url.username,
        password: url.password,
        database: url.pathname.slice(1),
      }).toEqual({
        name,
        host: 'postgres',
        port: '5432',
        user: postgres.POSTGRES_USER,
        password: postgres.POSTGRES_PASSWORD,
        database: postgres.POSTGRES_DB,
      });
    }
    expect(service('migrate').command).toEqual(['migrate']);
    expect(service('migrate').depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(service('postgres').healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(service('backend').environment!.SPECTATOR_RUN_MIGRATIONS).toBe('false');
    expect(service('backend').depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
    // The admin token must be given: compose refuses to start without it.
    expect(service('backend').environment!.SPECTATOR_ADMIN_TOKEN).toMatch(/^\$\{SPECTATOR_ADMIN_TOKEN:\?.+\}$/);
    expect(service('backend').ports).toEqual(['3000:3000']);
  });

  it('runs the setup script it mounts, after the backend is healthy, and hands the agent its token through a volume', () => {
    const setup = service('setup');
    const [script, tokenFile, stateFile] = setup.entrypoint!.slice(1);
    const [source, target] = bindMountFor('setup', script!);
    expect(repoPathExists(path.posix.join(source, path.posix.relative(target, script!)))).toBe(true);
    expect(setup.depends_on).toEqual({ backend: { condition: 'service_healthy' } });
    expect(new URL(setup.environment!.SPECTATOR_URL!).hostname).toBe('backend');
    // The token file is in a volume the agent mounts too; the state file (dashboard token) is not.
    const shared = namedVolumeFor('setup', tokenFile!);
    expect(Object.keys(compose.volumes)).toContain(shared);
    expect(service('agent').volumes).toContain(`${shared}:${path.posix.dirname(tokenFile!)}:ro`);
    const state = namedVolumeFor('setup', stateFile!);
    expect((service('agent').volumes ?? []).some((volume) => volume.startsWith(`${state}:`))).toBe(false);
    expect(service('agent').entrypoint!.join(' ')).toContain(`SPECTATOR_TOKEN=$$(cat ${tokenFile})`);
    // Overriding the entrypoint keeps the image's init (tini) in front, as its ENTRYPOINT has it.
    expect(service('agent').entrypoint!.slice(0, 3)).toEqual(['/usr/bin/tini', '-s', '--']);
    expect(readRepoFile('Dockerfile.agent')).toContain('ENTRYPOINT ["/usr/bin/tini", "-s", "--", "spectator-agent"]');
    expect(service('agent').depends_on?.setup).toEqual({ condition: 'service_completed_successfully' });
  });

  it('puts the agent in front of the demo API as a sidecar: one network namespace, the app on 127.0.0.1', async () => {
    const demo = service('demo-api');
    const agent = service('agent');
    expect(agent.network_mode).toBe('service:demo-api');

    // The demo API's own option parser reads its command: loopback only, on the upstream's port.
    const [script, ...args] = demo.command!.slice(1);
    const [source, target] = bindMountFor('demo-api', script!);
    const serverFile = path.posix.join(source, path.posix.relative(target, script!));
    expect(repoPathExists(serverFile)).toBe(true);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { parseOptions } = require(path.join('..', '..', serverFile)) as {
      parseOptions: (argv: string[], env: object) => { port: number; host: string };
    };
    const app = parseOptions(args, {});

    // The agent's own option parser reads its command and environment.
    const config = parseAgentConfig(agent.command!, {
      ...agent.environment,
      SPECTATOR_TOKEN: 'token-from-the-setup-volume',
    });
    expect(config.upstream?.toString()).toBe(`http://${app.host}:${app.port}/`);
    expect(app.host).toBe('127.0.0.1');
    expect(config.environment.kind).toBe('local');
    expect(demo.ports).toEqual([`${config.listen.port}:${config.listen.port}`]);
    // The backend by its service name, on the port the backend publishes.
    expect(config.backend).toContain(`//backend:${service('backend').ports![0]!.split(':')[1]}`);
  });

  it("mounts deploy/service.yml at the agent's SPECTATOR_CONFIG, and it ignores the landing page only", () => {
    const configPath = service('agent').environment!.SPECTATOR_CONFIG!;
    const [source] = bindMountFor('agent', configPath);
    expect(source).toBe('deploy/service.yml');
    const { rules, errors } = parseServiceConfig(readRepoFile(source));
    expect(errors).toEqual([]);
    expect(isIgnored(rules, 'GET', '/script.js')).toBe(true);
    expect(isIgnored(rules, 'POST', '/posts')).toBe(false);
  });

  it('runs the demo API and the setup without root where nothing needs it', () => {
    expect(service('demo-api').user).toBe('node');
    // Only the one-shot setup writes into a fresh named volume as root.
    expect(
      Object.entries(services)
        .filter(([, candidate]) => candidate.user === 'root')
        .map(([name]) => name),
    ).toEqual(['setup']);
  });
});
