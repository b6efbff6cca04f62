import fs from 'node:fs';
import path from 'node:path';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IStatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IJob } from 'kubernetes-models/batch/v1/Job';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { ISecret } from 'kubernetes-models/v1/Secret';
import type { IService } from 'kubernetes-models/v1/Service';
import { parseAgentConfig } from '@spectator/agent';
import { isIgnored, parseServiceConfig } from '@spectator/shared';
// The config module alone: the backend's index loads NestJS, which this project does not transform.
import { ConfigError, parseConfig } from '../../backend/src/config/config';
import {
  argValue,
  container,
  envVar,
  find,
  kustomizationResources,
  loadManifests,
  portNumber,
  schemaErrors,
  type Manifest,
} from './support/k8s';
import { REPO_ROOT } from './support/repo';

/** `name:tag@sha256:<digest>`: the digest decides what runs, the tag says what it was. */
const PINNED_IMAGE = /^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/;

const backend = loadManifests('k8s/backend');
const exampleApp = loadManifests('k8s/example-app');

/** The pod spec of a workload, failing clearly when it has none. */
function podSpec(workload: IDeployment | IStatefulSet | IJob): IPodSpec {
  const spec = workload.spec?.template.spec;
  if (!spec) throw new Error('workload without a pod spec');
  return spec;
}

/** The one NetworkPolicy whose podSelector selects a workload's pods. */
function policyFor(manifests: readonly Manifest[], workload: IDeployment | IStatefulSet | IJob): INetworkPolicy {
  const labels = workload.spec?.template.metadata?.labels ?? {};
  const policies = (
    manifests.filter((manifest) => manifest.kind === 'NetworkPolicy') as unknown as (INetworkPolicy & Manifest)[]
  ).filter((policy) =>
    Object.entries(policy.spec?.podSelector.matchLabels ?? {}).every(([key, value]) => labels[key] === value),
  );
  expect(policies).toHaveLength(1);
  return policies[0]!;
}

/** The port of a `host:port` or `[host:]port` value. */
function portOf(hostPort: string | undefined): number {
  return Number(hostPort?.split(':').at(-1));
}

/** Where a Service sends traffic: the container port its targetPort resolves to in a pod spec. */
function serviceTarget(service: IService, pod: IPodSpec): { container: string; port: number } | undefined {
  const target = service.spec?.ports?.[0]?.targetPort;
  for (const candidate of pod.containers) {
    const port = portNumber(candidate, target);
    if (port !== undefined) return { container: candidate.name, port };
  }
  return undefined;
}

/** A `secretKeyRef` of an env var, checked to point at an existing Secret key. */
function secretKeyOf(target: IContainer, name: string, secrets: readonly Manifest[]): string {
  const ref = envVar(target, name)?.valueFrom?.secretKeyRef;
  expect({ name, ref: ref !== undefined }).toEqual({ name, ref: true });
  const secret = find<ISecret>(secrets, 'Secret', ref!.name!);
  expect(Object.keys(secret.stringData ?? secret.data ?? {})).toContain(ref!.key);
  return (secret.stringData ?? {})[ref!.key]!;
}

/**
 * The environment a container gets, as the kubelet resolves it: plain values, Secret keys
 * (`secrets` may replace some values) and the downward API's label fields.
 */
function resolvedEnv(
  target: IContainer,
  manifests: readonly Manifest[],
  labels: Record<string, string>,
  replace: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of target.env ?? []) {
    const secretRef = entry.valueFrom?.secretKeyRef;
    const fieldPath = entry.valueFrom?.fieldRef?.fieldPath;
    if (entry.value !== undefined) env[entry.name] = entry.value;
    else if (secretRef)
      env[entry.name] =
        replace[entry.name] ?? (find<ISecret>(manifests, 'Secret', secretRef.name!).stringData ?? {})[secretRef.key]!;
    else if (fieldPath) env[entry.name] = labels[/^metadata\.labels\['(.+)'\]$/.exec(fieldPath)?.[1] ?? '']!;
    else throw new Error(`env ${entry.name}: unsupported source`);
  }
  return env;
}

describe.each([
  ['k8s/backend', backend],
  ['k8s/example-app', exampleApp],
])('%s', (folder, manifests) => {
  it('is valid against the Kubernetes schemas', () => {
    expect(manifests.length).toBeGreaterThan(0);
    expect(manifests.flatMap(schemaErrors)).toEqual([]);
  });

  it('lists every manifest file in its kustomization, and only those', () => {
    const files = fs
      .readdirSync(path.join(REPO_ROOT, folder))
      .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
    expect(kustomizationResources(folder).sort()).toEqual(files.sort());
  });

  it('selects the pods of each workload with each Service and workload selector', () => {
    const workloads = manifests.filter((manifest) =>
      ['Deployment', 'StatefulSet'].includes(manifest.kind),
    ) as unknown as (IDeployment & Manifest)[];
    for (const service of manifests.filter((manifest) => manifest.kind === 'Service') as unknown as (IService &
      Manifest)[]) {
      const selected = workloads.filter((workload) =>
        Object.entries(service.spec?.selector ?? {}).every(
          ([key, value]) => workload.spec?.template.metadata?.labels?.[key] === value,
        ),
      );
      expect({ service: service.metadata.name, selected: selected.length }).toEqual({
        service: service.metadata.name,
        selected: 1,
      });
      expect(serviceTarget(service, podSpec(selected[0]!))).toBeDefined();
    }
    for (const workload of workloads) {
      expect(workload.spec?.template.metadata?.labels).toMatchObject(
        workload.spec?.selector.matchLabels ?? { missing: 'matchLabels' },
      );
    }
  });

  it('marks every secret value as a placeholder to replace', () => {
    for (const secret of manifests.filter((manifest) => manifest.kind === 'Secret') as unknown as (ISecret &
      Manifest)[]) {
      const values = Object.entries(secret.stringData ?? {}).filter(([key]) => /PASSWORD|TOKEN|DATABASE_URL/.test(key));
      expect(values.length).toBeGreaterThan(0);
      for (const [key, value] of values)
        expect({ key, value }).toEqual({ key, value: expect.stringContaining('CHANGE-ME') });
      expect(secret.data).toBeUndefined();
    }
  });

  it('puts every workload under a NetworkPolicy', () => {
    const workloads = manifests.filter((manifest) =>
      ['Deployment', 'StatefulSet', 'Job'].includes(manifest.kind),
    ) as unknown as (IDeployment & Manifest)[];
    expect(workloads.length).toBeGreaterThan(0);
    for (const workload of workloads) expect(policyFor(manifests, workload).spec?.policyTypes).toContain('Ingress');
  });

  it('pins every public image by digest, its tag beside it', () => {
    const images = (
      manifests.filter((manifest) =>
        ['Deployment', 'StatefulSet', 'Job'].includes(manifest.kind),
      ) as unknown as (IDeployment & Manifest)[]
    ).flatMap((workload) => podSpec(workload).containers.map((each) => each.image ?? ''));
    // registry.example.com stands for the operator's own registry, where the release tags the images.
    for (const image of images.filter((name) => !name.startsWith('registry.example.com/')))
      expect(image).toMatch(PINNED_IMAGE);
  });

  it('gives every container resource requests and a memory limit', () => {
    const workloads = manifests.filter((manifest) =>
      ['Deployment', 'StatefulSet', 'Job'].includes(manifest.kind),
    ) as unknown as (IDeployment & Manifest)[];
    for (const workload of workloads) {
      for (const each of podSpec(workload).containers) {
        expect({
          container: each.name,
          requests: Object.keys(each.resources?.requests ?? {}).sort(),
          memoryLimit: each.resources?.limits?.memory !== undefined,
        }).toEqual({
          container: each.name,
          requests: ['cpu', 'memory'],
          memoryLimit: true,
        });
      }
    }
  });
});

describe('k8s/backend wiring', () => {
  const deployment = find<IDeployment>(backend, 'Deployment', 'spectator-backend');
  const server = container(podSpec(deployment).containers, 'backend');
  const job = find<IJob>(backend, 'Job', 'spectator-migrate');
  const migrate = container(podSpec(job).containers, 'migrate');
  const service = find<IService>(backend, 'Service', 'spectator-backend');

  it('serves on the PORT it is given, on all interfaces, and the Service targets it', () => {
    const port = Number(envVar(server, 'PORT')?.value);
    expect(portNumber(server, 'http')).toBe(port);
    expect(envVar(server, 'HOST')?.value).toBe('0.0.0.0');
    expect(serviceTarget(service, podSpec(deployment))).toEqual({ container: 'backend', port });
  });

  it('probes readiness on /api/v1/health (with the database) and liveness on /api/v1/health/live (without), at the serving port', () => {
    // backend/test/health.test.ts shows /health/live answering while the database is unreachable.
    expect([server.readinessProbe?.httpGet?.path, server.livenessProbe?.httpGet?.path]).toEqual([
      '/api/v1/health',
      '/api/v1/health/live',
    ]);
    for (const probe of [server.readinessProbe, server.livenessProbe]) {
      expect(portNumber(server, probe?.httpGet?.port)).toBe(Number(envVar(server, 'PORT')?.value));
    }
  });

  it('runs PostgreSQL as its own non-root user, without privileges, on a read-only root filesystem', () => {
    const statefulSet = find<IStatefulSet>(backend, 'StatefulSet', 'spectator-postgres');
    const pod = podSpec(statefulSet);
    const postgres = container(pod.containers, 'postgres');
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 999,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(postgres.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    // What it writes outside its data volume: the socket folder and /tmp.
    const mounts = (postgres.volumeMounts ?? []).map((mount) => [
      mount.mountPath,
      pod.volumes?.find((volume) => volume.name === mount.name)?.emptyDir !== undefined,
    ]);
    expect(mounts).toEqual(
      expect.arrayContaining([
        ['/var/run/postgresql', true],
        ['/tmp', true],
      ]),
    );
  });

  it('lets only the backend and the migration Job reach PostgreSQL, on 5432', () => {
    const policy = policyFor(backend, find<IStatefulSet>(backend, 'StatefulSet', 'spectator-postgres'));
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.egress).toEqual([]);
    const [rule, ...others] = policy.spec?.ingress ?? [];
    expect(others).toEqual([]);
    expect(rule?.from?.map((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name']).sort()).toEqual([
      'spectator-backend',
      'spectator-migrate',
    ]);
    expect(rule?.from?.every((peer) => peer.namespaceSelector === undefined && peer.ipBlock === undefined)).toBe(true);
    expect(rule?.ports).toEqual([{ protocol: 'TCP', port: 5432 }]);
  });

  it('lets the backend take connections on its port only, and reach DNS, PostgreSQL and public addresses', () => {
    const policy = policyFor(backend, deployment);
    expect(policy.spec?.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: Number(envVar(server, 'PORT')?.value) }] },
    ]);
    const egress = policy.spec?.egress ?? [];
    expect(
      egress.some((rule) =>
        rule.to?.some((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'spectator-postgres'),
      ),
    ).toBe(true);
    const open = egress.flatMap((rule) => rule.to ?? []).find((peer) => peer.ipBlock?.cidr === '0.0.0.0/0');
    // Webhooks go to public receivers; the cluster's private ranges and cloud metadata are out.
    expect(open?.ipBlock?.except).toEqual(
      expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']),
    );
  });

  it('takes DATABASE_URL and the admin token from the Secret, and leaves migrations to the Job', () => {
    secretKeyOf(server, 'DATABASE_URL', backend);
    secretKeyOf(server, 'SPECTATOR_ADMIN_TOKEN', backend);
    expect(envVar(server, 'SPECTATOR_RUN_MIGRATIONS')?.value).toBe('false');
  });

  it('runs `spectator-backend migrate` in the Job with the same image and database', () => {
    expect(migrate.image).toBe(server.image);
    // No `command`: the image's ENTRYPOINT (spectator-backend) runs with these args.
    expect(migrate.command).toBeUndefined();
    expect(migrate.args).toEqual(['migrate']);
    expect(envVar(migrate, 'DATABASE_URL')?.valueFrom).toEqual(envVar(server, 'DATABASE_URL')?.valueFrom);
    expect(podSpec(job).restartPolicy).toBe('OnFailure');
  });

  it('points DATABASE_URL at the bundled PostgreSQL with its user, password and database', () => {
    const url = new URL(secretKeyOf(server, 'DATABASE_URL', backend));
    const postgresSet = find<IStatefulSet>(backend, 'StatefulSet', 'spectator-postgres');
    const postgresService = find<IService>(backend, 'Service', 'spectator-postgres');
    const postgres = container(podSpec(postgresSet).containers, 'postgres');
    const credentials =
      find<ISecret>(backend, 'Secret', postgres.envFrom?.[0]?.secretRef?.name ?? 'missing').stringData ?? {};
    expect(postgresSet.spec?.serviceName).toBe(postgresService.metadata.name);
    expect(url.hostname).toBe(postgresService.metadata.name);
    expect(Number(url.port)).toBe(postgresService.spec?.ports?.[0]?.port);
    expect(serviceTarget(postgresService, podSpec(postgresSet))).toEqual({
      container: 'postgres',
      port: Number(url.port),
    });
    expect({ user: url.username, password: decodeURIComponent(url.password), database: url.pathname.slice(1) }).toEqual(
      {
        user: credentials.POSTGRES_USER,
        password: credentials.POSTGRES_PASSWORD,
        database: credentials.POSTGRES_DB,
      },
    );
    // Its data on the claim; the other mounts are emptyDirs (see the read-only root test).
    const claimed = postgres.volumeMounts?.filter(
      (mount) => !podSpec(postgresSet).volumes?.some((volume) => volume.name === mount.name),
    );
    expect(claimed?.map((mount) => mount.name)).toEqual(
      postgresSet.spec?.volumeClaimTemplates?.map((claim) => claim.metadata?.name),
    );
  });

  it("is read by the backend's own configuration parser, which refuses the admin token placeholder", () => {
    const labels = deployment.spec?.template.metadata?.labels ?? {};
    expect(() => parseConfig(resolvedEnv(server, backend, labels))).toThrow(ConfigError);
    expect(() => parseConfig(resolvedEnv(server, backend, labels))).toThrow(/SPECTATOR_ADMIN_TOKEN/);
    const config = parseConfig(resolvedEnv(server, backend, labels, { SPECTATOR_ADMIN_TOKEN: 'a'.repeat(32) }));
    expect({
      port: config.port,
      host: config.host,
      runMigrations: config.runMigrations,
      database: new URL(config.databaseUrl!).hostname,
    }).toEqual({
      port: portNumber(server, 'http'),
      host: '0.0.0.0',
      runMigrations: false,
      database: 'spectator-postgres',
    });
  });

  it('runs several replicas that stay available through rolling updates, drains and scale-downs', () => {
    const pdb = find<IPodDisruptionBudget>(backend, 'PodDisruptionBudget', 'spectator-backend');
    const hpa = find<IHorizontalPodAutoscaler>(backend, 'HorizontalPodAutoscaler', 'spectator-backend');
    const podLabels = deployment.spec?.template.metadata?.labels ?? {};
    expect(
      Object.entries(pdb.spec?.selector?.matchLabels ?? { none: 'selected' }).every(
        ([key, value]) => podLabels[key] === value,
      ),
    ).toBe(true);
    expect(hpa.spec?.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata?.name,
    });
    const replicas = deployment.spec?.replicas ?? 1;
    expect(hpa.spec?.minReplicas).toBe(replicas);
    expect(hpa.spec?.maxReplicas).toBeGreaterThan(replicas);
    // A drain may take a pod only while another one serves.
    expect(replicas).toBeGreaterThanOrEqual(2);
    expect(Number(pdb.spec?.minAvailable)).toBeGreaterThanOrEqual(1);
    expect(Number(pdb.spec?.minAvailable)).toBeLessThan(replicas);
    expect(deployment.spec?.strategy?.rollingUpdate).toMatchObject({ maxUnavailable: 0 });
  });

  it('stops a pod only after its endpoint is gone, within the grace period', () => {
    const preStop = server.lifecycle?.preStop?.exec?.command ?? [];
    expect(preStop.slice(0, 1)).toEqual(['sleep']);
    const delay = Number(preStop[1]);
    expect(delay).toBeGreaterThan(0);
    // The backend's own drain (sockets, in-flight requests, the database pool) follows the sleep.
    expect(podSpec(deployment).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(delay + 20);
  });

  it('keeps every object in the spectator namespace it creates', () => {
    expect(find(backend, 'Namespace', 'spectator')).toBeDefined();
    expect(
      backend.filter((manifest) => manifest.kind !== 'Namespace').map((manifest) => manifest.metadata.namespace),
    ).toEqual(backend.filter((manifest) => manifest.kind !== 'Namespace').map(() => 'spectator'));
  });
});

describe('k8s/example-app wiring (the agent as a sidecar)', () => {
  const deployment = find<IDeployment>(exampleApp, 'Deployment', 'posts-api');
  const pod = podSpec(deployment);
  const labels = deployment.spec?.template.metadata?.labels ?? {};
  const app = container(pod.containers, 'app');
  const agent = container(pod.containers, 'spectator-agent');
  const service = find<IService>(exampleApp, 'Service', 'posts-api');

  it("sends the Service's traffic to the agent's proxy port, not to the app", () => {
    expect(serviceTarget(service, pod)).toEqual({
      container: 'spectator-agent',
      port: portOf(envVar(agent, 'SPECTATOR_LISTEN')?.value),
    });
  });

  it("forwards from the agent to the app's container port on 127.0.0.1", () => {
    const upstream = new URL(
      argValue(agent, '--upstream') ?? envVar(agent, 'SPECTATOR_UPSTREAM')?.value ?? 'http://missing',
    );
    expect(upstream.hostname).toBe('127.0.0.1');
    expect(Number(upstream.port)).toBe(portNumber(app, 'app'));
    expect(Number(envVar(app, 'PORT')?.value)).toBe(Number(upstream.port));
  });

  it.each([
    ['SPECTATOR_ENV', 'spectator.dev/environment'],
    ['SPECTATOR_BUILD', 'spectator.dev/build'],
    ['SPECTATOR_COMMIT', 'spectator.dev/commit'],
  ])('sets %s from the pod label %s through the downward API', (name, label) => {
    expect(envVar(agent, name)?.valueFrom?.fieldRef?.fieldPath).toBe(`metadata.labels['${label}']`);
    expect(typeof labels[label]).toBe('string');
  });

  it('labels the example pod as a staging build with a commit', () => {
    expect(['staging', 'production']).toContain(labels['spectator.dev/environment']);
    expect(labels['spectator.dev/commit']).toMatch(/^[0-9a-f]{40}$/);
  });

  it('takes the agent token from a Secret and streams to the backend Service', () => {
    secretKeyOf(agent, 'SPECTATOR_TOKEN', exampleApp);
    const backendUrl = new URL(envVar(agent, 'SPECTATOR_BACKEND_URL')?.value ?? 'http://missing');
    const backendService = find<IService>(backend, 'Service', 'spectator-backend');
    expect(backendUrl.hostname).toBe(
      `${backendService.metadata.name}.${backendService.metadata.namespace}.svc.cluster.local`,
    );
    expect(Number(backendUrl.port)).toBe(backendService.spec?.ports?.[0]?.port);
  });

  it('mounts service.yml from the ConfigMap at SPECTATOR_CONFIG, as a directory so edits reach the agent', () => {
    const configPath = envVar(agent, 'SPECTATOR_CONFIG')?.value ?? 'missing';
    const mount = agent.volumeMounts?.find((candidate) => configPath.startsWith(`${candidate.mountPath}/`));
    expect(mount).toBeDefined();
    expect(mount!.subPath).toBeUndefined();
    const volume = pod.volumes?.find((candidate) => candidate.name === mount!.name);
    const configMap = find<IConfigMap>(exampleApp, 'ConfigMap', volume?.configMap?.name ?? 'missing');
    const fileName = path.posix.relative(mount!.mountPath, configPath);
    const key = volume?.configMap?.items?.find((item) => item.path === fileName)?.key ?? fileName;
    // The agent's own parser reads it without an error, and it ignores the landing page, not the API.
    const { rules, errors } = parseServiceConfig(configMap.data?.[key] ?? '');
    expect(errors).toEqual([]);
    for (const [method, path] of [
      ['GET', '/'],
      ['PUT', '/db'],
      ['GET', '/style.css'],
      ['OPTIONS', '/posts'],
    ])
      expect({ method, path, ignored: isIgnored(rules, method!, path!) }).toEqual({ method, path, ignored: true });
    expect(isIgnored(rules, 'POST', '/posts')).toBe(false);
  });

  it("probes the agent's admin port: readiness on /readyz, liveness on /healthz", () => {
    const adminPort = portOf(envVar(agent, 'SPECTATOR_ADMIN')?.value);
    expect(portNumber(agent, agent.readinessProbe?.httpGet?.port)).toBe(adminPort);
    expect(portNumber(agent, agent.livenessProbe?.httpGet?.port)).toBe(adminPort);
    expect([agent.readinessProbe?.httpGet?.path, agent.livenessProbe?.httpGet?.path]).toEqual(['/readyz', '/healthz']);
  });

  it("is read by the agent's own option parser as a staging agent of this pod's build and commit", () => {
    const config = parseAgentConfig(agent.args ?? [], resolvedEnv(agent, exampleApp, labels));
    expect(config.listen.port).toBe(serviceTarget(service, pod)?.port);
    expect(config.admin?.port).toBe(portNumber(agent, 'admin'));
    expect(config.upstream?.toString()).toBe(`http://127.0.0.1:${portNumber(app, 'app')}/`);
    expect(config.environment).toEqual({
      kind: 'staging',
      build: labels['spectator.dev/build'],
      commit: labels['spectator.dev/commit'],
    });
    expect(config.configPath).toBe('/etc/spectator/service.yml');
    expect(config.backend).toMatch(/^ws:\/\/spectator-backend\.spectator\.svc\.cluster\.local:3000\//);
  });

  it("lets clients reach the agent's proxy but not the app's own port, and the admin port only from monitoring", () => {
    const policy = policyFor(exampleApp, deployment);
    const allowed = (policy.spec?.ingress ?? []).flatMap((rule) =>
      (rule.ports ?? []).map((port) => ({
        port: port.port,
        from: rule.from?.map((peer) => peer.namespaceSelector?.matchLabels) ?? 'anywhere',
      })),
    );
    expect(allowed).toEqual([
      { port: serviceTarget(service, pod)?.port, from: 'anywhere' },
      { port: portNumber(agent, 'admin'), from: [{ 'kubernetes.io/metadata.name': 'monitoring' }] },
    ]);
    expect(allowed.map((rule) => rule.port)).not.toContain(portNumber(app, 'app'));
  });

  it('bounds the sidecar with CPU and memory limits', () => {
    expect(Object.keys(agent.resources?.limits ?? {}).sort()).toEqual(['cpu', 'memory']);
  });
});
