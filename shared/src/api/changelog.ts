import type { MatrixKind } from './lifecycle';
import type { ChangeResponse } from './types';

/** Where a version runs now: an environment whose newest evidence of the endpoint conforms to it. */
export interface ChangelogRunsIn {
  kind: MatrixKind;
  /** The environment row: `PR #12` for CI, the build for staging and production. */
  name: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  lastSeen: string;
}

/** One entry of a project's changelog: a version of an endpoint and what changed in it. */
export interface ChangelogEntry {
  versionId: string;
  endpointId: string;
  method: string;
  path: string;
  version: string;
  /** The version before it, null for the first. */
  previous: string | null;
  /** A new major version (by the versioning rules), or a change that breaks clients. */
  breaking: boolean;
  /** The changes from `previous` (empty for the first version). */
  changes: ChangeResponse[];
  createdAt: string;
  /** The proposal that made it and who approved it; null when none is recorded. */
  proposal: {
    id: string;
    title: string;
    createdBy: string | null;
    approvedBy: string | null;
    approvedAt: string | null;
  } | null;
  /** Production first, then staging, then CI runs. */
  runsIn: ChangelogRunsIn[];
}

/** `GET /projects/{p}/changelog`: the newest versions of every endpoint, newest first. */
export interface ChangelogResponse {
  project: string;
  projectName: string;
  entries: ChangelogEntry[];
}

/** A build of an environment as a release shows it. */
export interface ReleaseBuild {
  /** The environment row's name (the build, or the commit when the agent named no build). */
  name: string;
  build: string | null;
  commit: string | null;
  firstSeen: string;
  lastSeen: string;
}

/** An endpoint whose version differs between two builds. */
export interface ReleaseEndpoint {
  endpointId: string;
  method: string;
  path: string;
  /** The version build A showed; null when A's traffic did not reach the endpoint. */
  from: string | null;
  to: string;
  /** B's traffic conforms to no version (`to` is the nearest). */
  drift: boolean;
  breaking: boolean;
  changes: ChangeResponse[];
}

/** A release: build A → build B of an environment, with what changed for clients. */
export interface Release {
  /** null for the first build seen there. */
  from: ReleaseBuild | null;
  to: ReleaseBuild;
  endpoints: ReleaseEndpoint[];
}

/** `GET /projects/{p}/changelog/releases?environment=production`: releases newest first. */
export interface ReleasesResponse {
  environment: MatrixKind;
  releases: Release[];
}
