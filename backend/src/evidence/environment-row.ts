import type { AgentEnvironment, MatrixKind } from '@spectator/shared';

/** Which matrix row an agent's traffic belongs to. */
export interface EnvironmentRowKey {
  kind: MatrixKind;
  /** Shown in the matrix: `PR #42` for a CI run, the build for staging and production. */
  name: string;
  /** What "runs there now" is tracked per: the pull request for CI, `''` (the whole environment) otherwise. */
  scope: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
}

/** The name of a CI run's row and capture environment: `PR #42` (stored, and looked up by it). */
export function pullRequestRowName(pullRequest: string): string {
  return `PR #${pullRequest}`;
}

/**
 * The matrix row of an agent environment: one per pull request's CI run, one per staging build and
 * one per production build; `null` for `local` captures. An environment without its identifier
 * (a CI run without a pull request, a build without a name) still gets a row, named after what it
 * has, so its evidence is not lost.
 */
export function environmentRowOf(environment: AgentEnvironment): EnvironmentRowKey | null {
  const pullRequest = environment.pullRequest ?? null;
  const build = environment.build ?? null;
  const commit = environment.commit ?? null;
  switch (environment.kind) {
    case 'local':
      return null;
    case 'ci':
      return pullRequest === null
        ? { kind: 'ci', name: build ?? commit ?? 'ci', scope: '', pullRequest, build, commit }
        : { kind: 'ci', name: pullRequestRowName(pullRequest), scope: pullRequest, pullRequest, build, commit };
    case 'staging':
    case 'production':
      return {
        kind: environment.kind,
        name: build ?? commit ?? environment.kind,
        scope: '',
        pullRequest,
        build,
        commit,
      };
  }
}
