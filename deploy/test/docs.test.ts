// Every command shown in the deployment docs is run by a test, or — where it needs a Docker
// engine or a cluster, which tests do not have — the files it names are the ones the tests of
// this folder validate. A command no rule recognises fails here, so the docs cannot drift.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { kustomizationResources, loadManifests } from './support/k8s';
import { readRepoFile, REPO_ROOT, repoPathExists } from './support/repo';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseArgs } = require('../start.js') as { parseArgs: (argv: string[]) => unknown };

/** The pages of docs/ this folder's tests answer for. */
const PAGES = [
  'docs/README.md',
  'docs/concepts.md',
  'docs/kubernetes.md',
  'docs/ci.md',
  'docs/operations.md',
  'docs/privacy.md',
];

/** Shell commands of the fenced `sh` blocks of a page, comments dropped. */
function commands(page: string): string[] {
  return [...readRepoFile(page).matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== ''),
  );
}

const manifests = [...loadManifests('k8s/backend'), ...loadManifests('k8s/example-app')];
const images = new Set(
  manifests.flatMap((manifest) => JSON.stringify(manifest).match(/registry\.example\.com\/[\w.-]+:[\w.-]+/g) ?? []),
);
const startTest = readRepoFile('deploy/test/start.test.ts');

/** Each rule: a command pattern, and the check that what it names is what the tests run or validate. */
const RULES: [RegExp, (match: RegExpMatchArray) => void][] = [
  [
    /^(?:npm install && )?npm start(?: -- (.+))?$/,
    ([, args]) => {
      // deploy/test/start.test.ts runs deploy/start.js (npm start's script) with these options.
      const argv = args?.split(' ') ?? [];
      expect(() => parseArgs(argv)).not.toThrow();
      for (const flag of argv.filter((arg) => arg.startsWith('--'))) expect(startTest).toContain(`'${flag}'`);
      expect(JSON.parse(readRepoFile('package.json')).scripts.start).toBe('node deploy/start.js');
    },
  ],
  [
    /^docker build -f (\S+) -t (\S+) \.$/,
    ([, dockerfile, tag]) => {
      // deploy/test/dockerfiles.test.ts parses and checks this Dockerfile; the tag is the image the manifests run.
      expect(readRepoFile('deploy/test/dockerfiles.test.ts')).toContain(`file: '${dockerfile}'`);
      expect([...images]).toContain(tag);
      expect(tag).toContain(dockerfile!.replace('Dockerfile.', 'spectator-'));
    },
  ],
  [
    /^kubectl apply -k (\S+)$/,
    ([, folder]) => {
      // deploy/test/k8s.test.ts validates these kustomizations and every file they list.
      expect(['k8s/backend', 'k8s/example-app']).toContain(folder);
      expect(kustomizationResources(folder!).every((file) => repoPathExists(path.join(folder!, file)))).toBe(true);
    },
  ],
  [
    /^kubectl -n (\S+) (?:wait --for=condition=complete job\/(\S+) --timeout=\d+s|delete job (\S+) --ignore-not-found|rollout restart deployment\/(\S+))$/,
    ([, namespace, waitFor, remove, restart]) => {
      // The object it names is in the manifests the k8s tests validate.
      const [kind, name] = restart ? ['Deployment', restart] : ['Job', waitFor ?? remove];
      expect(
        manifests.some(
          (manifest) =>
            manifest.kind === kind && manifest.metadata.name === name && manifest.metadata.namespace === namespace,
        ),
      ).toBe(true);
    },
  ],
  [
    /^docker run --rm -e DATABASE_URL (\S+) (.+)$/,
    ([, image, args]) => {
      // The same image and arguments as the migration Job the k8s tests check.
      const job = manifests.find((manifest) => manifest.kind === 'Job') as unknown as {
        spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
      };
      expect({ image, args: args!.split(' ') }).toEqual({
        image: job.spec.template.spec.containers[0]!.image,
        args: job.spec.template.spec.containers[0]!.args,
      });
    },
  ],
  [
    /^SPECTATOR_ADMIN_TOKEN=\$\(openssl rand -hex 32\) docker compose -f (\S+) up --build$/,
    ([, file]) => {
      // deploy/test/compose.test.ts checks this file; it requires exactly this variable.
      expect(file).toBe('deploy/docker-compose.yml');
      expect(fs.existsSync(path.join(REPO_ROOT, 'deploy/test/compose.test.ts'))).toBe(true);
      expect(
        (parse(readRepoFile(file!)) as { services: { backend: { environment: Record<string, string> } } }).services
          .backend.environment.SPECTATOR_ADMIN_TOKEN,
      ).toMatch(/^\$\{SPECTATOR_ADMIN_TOKEN:\?/);
    },
  ],
];

describe.each(PAGES)('%s', (page) => {
  const found = commands(page);

  it('shows only commands that a test runs or whose files the tests validate', () => {
    for (const command of found) {
      const rule = RULES.find(([pattern]) => pattern.test(command));
      expect({ command, covered: rule !== undefined }).toEqual({ command, covered: true });
      rule![1](command.match(rule![0])!);
    }
  });

  it('links only to files that exist', () => {
    for (const [, target] of readRepoFile(page).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      expect({ target, exists: repoPathExists(path.join(path.dirname(page), target!)) }).toEqual({
        target,
        exists: true,
      });
    }
  });
});

it('the docs show commands at all (the pattern finds fenced sh blocks)', () => {
  expect(PAGES.flatMap(commands).length).toBeGreaterThanOrEqual(8);
});

it('every SPECTATOR_ variable the Kubernetes docs and manifests set is one the agent or the backend reads', () => {
  const read = new Set([
    ...[...readRepoFile('agent/src/config.ts').matchAll(/envVar: '(SPECTATOR_[A-Z_]+)'/g)].map((match) => match[1]!),
    ...[...readRepoFile('backend/src/config/config.ts').matchAll(/\benv\.(SPECTATOR_[A-Z_]+)/g)].map(
      (match) => match[1]!,
    ),
  ]);
  const yamlBlocks = [...readRepoFile('docs/kubernetes.md').matchAll(/```yaml\n([\s\S]*?)```/g)].map(
    (block) => block[1]!,
  );
  for (const block of yamlBlocks) expect(() => parse(block)).not.toThrow();
  const set = [...yamlBlocks, ...manifests.map((manifest) => JSON.stringify(manifest))].flatMap((text) =>
    [...text.matchAll(/name"?:\s*"?(SPECTATOR_[A-Z_]+)/g)].map((match) => match[1]!),
  );
  expect(set).toEqual(expect.arrayContaining(['SPECTATOR_TLS_CERT', 'SPECTATOR_BACKEND_URL']));
  expect(set.filter((name) => !read.has(name))).toEqual([]);
});

it('docs/operations.md describes every variable the backend reads, and no other', () => {
  const read = new Set(
    [...readRepoFile('backend/src/config/config.ts').matchAll(/\benv\.([A-Z_]+)/g)].map((match) => match[1]!),
  );
  const table = readRepoFile('docs/operations.md').split('## Migrations')[0]!;
  const documented = new Set([...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]!));
  expect([...documented].sort()).toEqual([...read].sort());
});

it('the files users get cite no file they do not have (the spec, the design notes)', () => {
  const userFiles = [
    'README.md',
    ...fs
      .readdirSync(path.join(REPO_ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
    ...fs
      .readdirSync(path.join(REPO_ROOT, 'deploy'))
      .filter((name) => /\.(ya?ml|js)$/.test(name))
      .map((name) => `deploy/${name}`),
    'deploy/demo-api/server.js',
    'Dockerfile.agent',
    'Dockerfile.backend',
    'action.yml',
  ];
  const cited = userFiles.flatMap((file) =>
    [...readRepoFile(file).matchAll(/seed-spec|DESIGN\.md|STYLE\.md/g)].map((match) => `${file}: ${match[0]}`),
  );
  expect(cited).toEqual([]);
});
