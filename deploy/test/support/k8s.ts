import fs from 'node:fs';
import path from 'node:path';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IEnvVar } from 'kubernetes-models/v1/EnvVar';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './repo';

/** One object of a manifest file. */
export interface Manifest {
  /** Path relative to the repository root. */
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // Each test narrows the object it looks at with the kubernetes-models types.
  [field: string]: unknown;
}

/** Every YAML document of every `*.yaml` under a folder of the repository (kustomization files apart). */
export function loadManifests(folder: string): Manifest[] {
  const files = fs
    .readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.yaml') && path.basename(file) !== 'kustomization.yaml')
    .sort();
  return files.flatMap((file) => {
    const relative = path.posix.join(folder, file.split(path.sep).join('/'));
    return parseAllDocuments(fs.readFileSync(path.join(REPO_ROOT, relative), 'utf8')).map((document) => {
      if (document.errors.length > 0) throw new Error(`${relative}: ${document.errors[0]!.message}`);
      return { ...(document.toJS() as Omit<Manifest, 'file'>), file: relative } as Manifest;
    });
  });
}

/**
 * Validates an object against the Kubernetes (1.27) OpenAPI schema of its apiVersion and kind, as
 * shipped by the kubernetes-models package.
 * @returns the schema errors, empty when valid.
 * @throws Error when no schema exists for the apiVersion/kind (a typo there is an error too).
 */
export function schemaErrors(manifest: Manifest): string[] {
  const { file, ...object } = manifest;
  let model: { new (data: unknown): { validate(): void } };
  try {
    // apps/v1 + Deployment → kubernetes-models/apps/v1/Deployment; v1 + Service → kubernetes-models/v1/Service.
    // A computed synchronous require: the module is only known from the manifest.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    model = (require(`kubernetes-models/${manifest.apiVersion}/${manifest.kind}`) as Record<string, typeof model>)[
      manifest.kind
    ]!;
  } catch {
    throw new Error(`${file}: no Kubernetes schema for apiVersion ${manifest.apiVersion}, kind ${manifest.kind}`);
  }
  try {
    new model(object).validate();
    return [];
  } catch (err) {
    return [`${file} ${manifest.kind}/${manifest.metadata?.name}: ${(err as Error).message}`];
  }
}

/** The object of a kind and name among manifests; fails the test with a clear message if absent. */
export function find<T>(manifests: readonly Manifest[], kind: string, name: string): T & Manifest {
  const found = manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  if (!found)
    throw new Error(
      `no ${kind} named ${name} in ${[...new Set(manifests.map((manifest) => manifest.file))].join(', ')}`,
    );
  return found as T & Manifest;
}

/** A container of a pod spec by name. */
export function container(containers: readonly IContainer[], name: string): IContainer {
  const found = containers.find((candidate) => candidate.name === name);
  if (!found)
    throw new Error(`no container named ${name}; have ${containers.map((candidate) => candidate.name).join(', ')}`);
  return found;
}

/** The number of a container port given by number or by name. */
export function portNumber(target: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === 'number')
    return target.ports?.some((candidate) => candidate.containerPort === port) ? port : undefined;
  return target.ports?.find((candidate) => candidate.name === port)?.containerPort;
}

/** An env entry of a container by name. */
export function envVar(target: IContainer, name: string): IEnvVar | undefined {
  return target.env?.find((entry) => entry.name === name);
}

/** The value of a flag in a container's args (`--flag value` or `--flag=value`). */
export function argValue(target: IContainer, flag: string): string | undefined {
  const args = target.args ?? [];
  const index = args.indexOf(flag);
  if (index >= 0) return args[index + 1];
  return args.find((arg) => arg.startsWith(`${flag}=`))?.slice(flag.length + 1);
}

/** The resources listed by `<folder>/kustomization.yaml`. */
export function kustomizationResources(folder: string): string[] {
  const text = fs.readFileSync(path.join(REPO_ROOT, folder, 'kustomization.yaml'), 'utf8');
  const [document] = parseAllDocuments(text);
  return ((document!.toJS() as { resources?: string[] }).resources ?? []).slice();
}
